// Continuous batching: one scheduler thread owns the model and a paged KV cache, and runs
// many generations at once, one forward call per step.
//
// Requests drop into a bounded inbox. Between steps the thread retires finished and
// cancelled sequences (their KV blocks go back to the pool at once), asks the Scheduler for a
// plan (decode rows for the running sequences, prefill chunks under the step's token budget,
// admissions, preemptions), reserves the plan's blocks, and evaluates the whole batch in one
// Model::forward. Each sequence samples from its own logits row with its own Generation
// (sampling parameters, seeded RNG, stop strings), and its text goes to its own stream.
//
// A preempted sequence keeps its tokens (prompt and generated) and its Generation; when it is
// admitted again it re-prefills them all and continues where it stopped, emitting nothing
// twice. Greedy tokens do not depend on what else is in the batch: the model computes each
// row independently of the others.
//
// The prefix cache (on unless options.prefix_cache is false, per request unless cache_prompt
// is false): a sequence publishes its whole blocks as it computes them (prompt and generated
// tokens), and an admitted sequence starts from the longest cached prefix of its tokens
// (engine/prefix_cache.h), computing only the rest. A finished, cancelled or preempted sequence's
// blocks stay cached until the pool needs their space. A waiting sequence whose next blocks a
// running one is computing waits for them rather than computing them twice. With a disk tier,
// a sequence's published blocks are written to disk when it lets go of them (in the
// background), and a waiting sequence's next blocks are read back from disk before it starts.
// The logits after each prompt are kept too: a sequence that finds every
// position of its tokens cached, and the logits after them, chooses its first token as it
// starts, with no forward pass for it (an exact resend).
//
// Speculative decoding (a drafter unless options.spec is Off, per request unless speculative is
// false): before each step a decoding sequence may get draft tokens (engine/batch_drafting.h),
// fed as more rows of its decode chunk in the same forward step as
// everyone else's rows. Its Generation then chooses a token at each of those rows in turn, as
// plain decoding would, while the choice equals the draft token there: every token chosen is
// kept, the positions of the draft tokens it rejected leave the KV cache (model::KvCache::
// truncate) before anything is published, and the tokens are emitted one by one (a stop
// string or max_tokens inside the run ends it exactly where plain decoding would have). The
// tokens, and the random numbers a seeded sampler draws, are the same with and without drafts.
// A hybrid model's recurrent state cannot drop positions: a step with drafts copies it after the
// last token, and where a draft is rejected the state goes back to that copy and the accepted
// drafts are computed again in the next step (their tokens are emitted at once).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/batch_drafting.h"
#include "engine/batch_options.h"
#include "engine/batch_sequence.h"
#include "engine/engine.h"
#include "engine/engine_trace.h"
#include "engine/prefix_cache.h"
#include "engine/request_queue.h"
#include "engine/scheduler.h"
#include "engine/step_recorder.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

class BatchEngine final : public Engine {
 public:
  // Loads the model and allocates the KV pool. Throws on a model it cannot load and
  // std::invalid_argument for options that cannot work (a pool smaller than one block, ...).
  explicit BatchEngine(const BatchOptions& options);
  ~BatchEngine() override;  // requests still waiting or running finish Cancelled
  BatchEngine(const BatchEngine&) = delete;
  BatchEngine& operator=(const BatchEngine&) = delete;

  std::shared_ptr<Stream> submit(GenerationRequest request) override;
  EngineMetrics metrics() const override;
  const tokenizer::Tokenizer& tokenizer() const override { return tokenizer_; }
  std::string model_name() const override { return model_name_; }
  ModelFacts model_facts() const override { return model_facts_; }
  // min(the per-request context, the pool): one request may fill the whole pool.
  int64_t context_size() const override { return context_size_; }
  std::string chat_template() const override { return chat_template_; }
  EngineTrace* trace() override { return &trace_; }

 private:
  using Sequence = BatchSequence;
  using SequencePtr = std::unique_ptr<Sequence>;
  // What a plan set in motion: the sequences that step and their chunks' sizes.
  struct Work {
    std::vector<Sequence*> stepping;
    std::vector<int64_t> chunk_sizes;
    bool preempted = false;  // a sequence gave its blocks back
    bool answered = false;   // an admitted sequence finished on its first token, from cached logits
  };
  // A sequence's rows in this step's batch.
  struct Part {
    size_t first_logits_row = 0;
    size_t first_row = 0;  // its first row of the batch
    int64_t from = 0;      // its first position
    TimelineEvent event;
  };

  void serve();  // the scheduler thread
  void take_requests();
  void step();
  std::vector<SequenceView> running_views();
  std::vector<SequenceView> waiting_views();
  SequenceView waiting_view_of(Sequence& seq, size_t queue_index);
  bool held(const Sequence& seq, int64_t cached_blocks, size_t earlier);
  Work carry_out(const StepPlan& plan);
  void admit(size_t n, std::vector<Sequence*>& named, Work& work);
  void give_up_if_stuck();
  void retire_cancelled();
  void preempt(Sequence& seq);
  void start(Sequence& seq);
  // A sequence that started with every position cached: its next token, chosen from the
  // logits cached after them (its chunk in this step then feeds that token).
  void choose_from_cached_logits(Sequence& seq);
  void release(Sequence& seq);  // gives a finished or preempted sequence's slot and blocks back
  void requeue(SequencePtr seq);

  // One forward step: build batch, forward, choose, publish, record, emit.
  void evaluate(const Work& work);
  std::vector<Part> build_batch(const Work& work);
  bool forward(const Work& work);
  std::vector<int32_t> choose(Sequence& seq, int64_t chunk, Part& part);
  // From `first_row` on, one per draft token and one more, while they agree with its drafts.
  std::vector<int32_t> verify(Sequence& seq, size_t first_row, int64_t drafted);
  void follow(const Work& work, const std::vector<Part>& parts);
  void publish_blocks(const Work& work);
  void record(const Work& work, std::vector<Part>& parts, StepRecorder::TimePoint started);
  void emit(const Work& work, const std::vector<std::vector<int32_t>>& chosen);

  void fail_all_running(const std::string& error);
  void publish();  // the gauges metrics() reads
  int64_t slots_held() const;  // by running sequences, those ending now included
  void snapshot_if_watched(bool preempted);
  SequenceState state_of(const Sequence& seq) const;

  model::Model model_;
  const tokenizer::Tokenizer tokenizer_;
  const std::string model_name_, chat_template_;
  const ModelFacts model_facts_;
  model::KvCache pool_;
  const int64_t context_size_;
  PrefixCache prefix_;
  const Scheduler scheduler_;
  RequestQueue queue_;
  BatchDrafting drafting_;
  EngineTrace trace_;
  StepRecorder recorder_;

  // Owned by the scheduler thread.
  std::vector<SequencePtr> running_;
  std::deque<SequencePtr> waiting_;  // oldest first (preempted ones go back in arrival order)
  std::vector<int> free_slots_;
  uint64_t next_arrival_ = 0;
  model::Batch batch_;
  model::Logits logits_;

  std::atomic<bool> stopping_ = false;
  std::thread worker_;  // last: it starts once everything above exists
};

}  // namespace nanoserve::engine
