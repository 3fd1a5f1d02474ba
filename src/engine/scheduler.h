// The policy of continuous batching, apart from any model: given the sequences that hold a
// slot, those waiting, and the KV pool's free blocks, it plans one step.
//
// A sequence is its tokens (prompt, then each sampled token) and how many of them the KV cache
// holds (`cached`). A step feeds a chunk tokens[cached, cached + n) of some sequences; the
// chunk asks for logits only when it reaches the last token. Prefill, decode (a chunk of one)
// and recompute after preemption are the same mechanism.
//
// The plan, in priority order:
//   1. a decode row for every running sequence that has only its last token left to feed,
//      oldest first (every running sequence keeps streaming whatever prompts arrive); then a
//      row for each of its draft tokens (speculative decoding), oldest first, as far as the
//      budget and the free blocks go: drafts never preempt anyone, they shrink to fit;
//   2. prefill chunks of running sequences, oldest first, under the step's token budget;
//   3. admission, first come first served: the oldest waiting sequence starts when a slot is
//      free, budget is left and the pool's free blocks cover its whole prompt (less its cached
//      prefix) besides what the prefills already running still need, and it is not held (its
//      next blocks are being computed by a running sequence: prefilled once, then shared);
//      no one overtakes it. Nothing is admitted in a step that preempts;
//   4. prefill chunks of the sequences just admitted.
// When the pool cannot give a sequence the blocks its chunk needs, the newest sequence gives
// way: newer sequences are preempted (they free all their blocks and wait again, to be
// recomputed), then the sequence itself (a decode row) or its chunk shrinks to what fits (a
// prefill). The oldest sequence therefore always progresses, and a sequence that fits the
// pool alone always finishes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/defaults.h"

namespace nanoserve::engine {

// What the policy knows of one sequence. A waiting sequence whose prompt begins with blocks of
// the prefix cache starts with them: `cached` and `blocks` say what it would hold at once, and
// `attach_cost` what holding them takes from the pool's free blocks (idle cached blocks count
// as free until someone holds them).
struct SequenceView {
  uint64_t arrival = 0;  // submit order: smaller is older
  int64_t tokens = 0;    // prompt + generated so far (at least 1)
  int64_t cached = 0;    // of those, positions in the KV cache
  int64_t blocks = 0;    // KV blocks it holds
  int64_t shared = 0;    // running: of those, blocks another sequence holds too (preempting it frees the rest)
  int64_t attach_cost = 0;  // waiting: free blocks its cached prefix takes when it starts
  bool held = false;     // waiting: a running sequence is computing its next blocks; it waits for them
                         // (and, first come first served, so does everyone behind it)
  int64_t drafts = 0;    // running, decoding: draft tokens it would check in this step (speculative decoding)
};

struct SchedulerLimits {
  int max_running = 8;       // sequences holding a slot at once
  int64_t step_tokens = kDefaultStepTokens;  // rows per step (decode rows first); at least max_running
  int64_t block_size = 16;   // KV positions per block
};

struct StepPlan {
  struct Chunk {
    size_t seq = 0;  // index into running, or running.size() + i for the i-th admitted
    int64_t n = 0;   // tokens fed from the sequence's `cached` on
  };
  std::vector<size_t> preempted;  // indices into running, newest first
  size_t admitted = 0;            // the first `admitted` waiting sequences start now
  std::vector<Chunk> chunks;      // one per sequence that steps, in row order
  int64_t rows = 0;               // sum of the chunks' n
};

class Scheduler {
 public:
  // Throws std::invalid_argument for a limit that is not positive, or step_tokens < max_running.
  explicit Scheduler(SchedulerLimits limits);
  const SchedulerLimits& limits() const { return limits_; }

  // Blocks a sequence needs in all to hold n positions.
  int64_t blocks_for(int64_t positions) const { return (positions + limits_.block_size - 1) / limits_.block_size; }

  // `running`: the sequences holding a slot (at most max_running); `waiting`: oldest first.
  StepPlan plan(std::span<const SequenceView> running, std::span<const SequenceView> waiting,
                int64_t free_blocks) const;

 private:
  SchedulerLimits limits_;
};

}  // namespace nanoserve::engine
