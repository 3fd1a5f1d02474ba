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
// (model::KvCache), computing only the rest. A finished, cancelled or preempted sequence's
// blocks stay cached until the pool needs their space. A waiting sequence whose next blocks a
// running one is computing waits for them rather than computing them twice. With a disk tier,
// a sequence's published blocks are written to disk when it lets go of them (in the
// background), and a waiting sequence's next blocks are read back from disk before it starts.
// The logits after each prompt are kept too (LastLogitsCache): a sequence that finds every
// position of its tokens cached, and the logits after them, chooses its first token as it
// starts, with no forward pass for it (an exact resend).
//
// Speculative decoding (a drafter unless options.spec is Off, per request unless speculative is
// false): before each step a decoding sequence may get draft tokens (engine/drafter.h; how many:
// engine/draft_policy.h), fed as more rows of its decode chunk in the same forward step as
// everyone else's rows. Its Generation then chooses a token at each of those rows in turn, as
// plain decoding would, while the choice equals the draft token there: every token chosen is
// kept, the positions of the draft tokens it rejected leave the KV cache (model::KvCache::
// truncate) before anything is published, and the tokens are emitted one by one (a stop
// string or max_tokens inside the run ends it exactly where plain decoding would have). The
// tokens, and the random numbers a seeded sampler draws, are the same with and without drafts.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/defaults.h"
#include "engine/draft_policy.h"
#include "engine/drafter.h"
#include "engine/engine.h"
#include "engine/engine_trace.h"
#include "engine/last_logits_cache.h"
#include "engine/request_queue.h"
#include "engine/scheduler.h"
#include "model/kv_disk_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

enum class SpecMode { Off, Lookup, Draft };  // speculative decoding's drafter: none, prompt lookup, a draft model

struct BatchOptions {
  std::string model_path = "";
  int threads = 0;               // 0 = the machine's physical cores
  std::optional<model::KvType> kv_type = std::nullopt;  // model::ModelOptions::kv_type
  int64_t context_size = 0;      // per request; 0 = the default (engine/defaults.h)
  int parallel = 8;              // sequences generating at once
  int64_t kv_memory_bytes = 0;   // the KV pool; 0 = context_size × parallel positions
  int64_t step_tokens = kDefaultStepTokens;  // rows per forward step (decode rows first); at least parallel
  int64_t queue_limit = 64;      // requests waiting beyond the running ones; more: QueueFull
  bool prefix_cache = true;      // reuse the KV blocks of earlier prompts with the same prefix
  std::string cache_dir = "";    // the prefix cache's disk tier (model::KvDiskCache); empty: none
  int64_t cache_disk_bytes = 0;  // its bound
  model::PrefixIndex::HashFn prefix_hash = model::PrefixIndex::chain_hash;  // a test may force collisions
  SpecMode spec = SpecMode::Lookup;          // speculative decoding's drafter
  int64_t draft_max = kDefaultDraftMax;      // draft tokens per sequence and step at most
  std::string draft_model_path = "";         // SpecMode::Draft: a model with the same vocabulary
  // Draft whenever the drafter can, as many as it can up to draft_max (no cost model: fixed-length
  // speculation, --draft-policy always); tests use it to exercise verification in every step.
  bool draft_always = false;
  std::shared_ptr<Drafter> test_drafter = nullptr;  // tests: a drafter of their own instead of spec's
};

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

  // Batch-size histogram bounds (sequences advanced per step).
  static const std::vector<int64_t>& batch_size_bounds();

 private:
  struct Sequence {
    std::unique_ptr<Generation> generation;
    std::vector<int32_t> tokens;  // the prompt, then every sampled token
    uint64_t arrival = 0;         // taken from the inbox in this order
    int64_t cached = 0;           // positions of tokens in the KV cache
    int slot = -1;                // its KV cache sequence while it runs
    bool caching = false;         // uses the prefix cache
    std::vector<uint64_t> hashes; // chain hashes of tokens' whole blocks (model::KvCache::extend_chain)
    bool speculating = false;     // a drafter proposes tokens for it
    std::vector<int32_t> draft;   // this step's draft tokens (to follow tokens)
    std::vector<int32_t> guess;   // without drafts, the drafter's free guess of this step's token
    std::shared_ptr<RequestTimeline> timeline;
    std::chrono::steady_clock::time_point waiting_since;  // submitted, or preempted last
    int64_t preemptions = 0;
  };
  using SequencePtr = std::unique_ptr<Sequence>;

  void serve();  // the scheduler thread
  void step();
  SequenceView waiting_view_of(Sequence& seq, size_t queue_index);
  // The cached prefix seq would start with: all its positions where the logits after its last
  // token are cached too, else all but the last (it must compute that one for its logits).
  model::KvCache::PrefixHit find_prefix(const Sequence& seq) const;
  bool held(const Sequence& seq, int64_t cached_blocks, size_t earlier) const;
  void retire_cancelled();
  void preempt(Sequence& seq);
  void start(Sequence& seq);
  // A sequence that started with every position cached: its next token, chosen from the
  // logits cached after them (its chunk in this step then feeds that token).
  void choose_from_cached_logits(Sequence& seq);
  void release(Sequence& seq);  // gives a finished or preempted sequence's slot and blocks back
  void spill(const Sequence& seq);  // queues its published blocks that the disk tier lacks
  void load_from_disk(Sequence& seq);  // its next blocks from the disk tier into the pool
  void requeue(SequencePtr seq);
  // Fills the decoding sequences' drafts for this step, and their views' draft counts.
  void draft(std::vector<SequenceView>& running_view);
  void evaluate(const std::vector<Sequence*>& stepping, const std::vector<int64_t>& chunk_sizes);
  // A sequence whose chunk reached its last token: chooses its tokens from its logits rows
  // (from `first_row` on, one per draft token and one more) while they agree with its drafts.
  std::vector<int32_t> verify(Sequence& seq, size_t first_row, int64_t drafted);
  void fail_all_running(const std::string& error);
  void publish();  // the gauges metrics() reads
  int64_t slots_held() const;  // by running sequences, those ending now included
  // The trace (engine_trace.h): a sequence's steps of this evaluate() on its timeline, and
  // the step's record and a snapshot for the pages while someone watches.
  void record_steps(const std::vector<Sequence*>& stepping, std::vector<TimelineEvent>& events,
                    std::chrono::steady_clock::time_point started, std::chrono::steady_clock::time_point ended);
  void snapshot_if_watched(bool preempted);
  SequenceState state_of(const Sequence& seq) const;

  model::Model model_;
  const tokenizer::Tokenizer tokenizer_;
  const std::string model_name_, chat_template_;
  const ModelFacts model_facts_;
  model::KvCache cache_;
  const int64_t context_size_;
  const bool prefix_cache_;
  LastLogitsCache last_logits_;
  std::unique_ptr<model::KvDiskCache> disk_;
  std::vector<uint8_t> block_buffer_;  // one block, to and from the disk tier
  const Scheduler scheduler_;
  RequestQueue queue_;
  std::shared_ptr<Drafter> drafter_;  // none when speculation is off
  const int64_t draft_max_;
  const bool draft_always_;
  DraftPolicy draft_policy_;
  EngineTrace trace_;

  // Owned by the scheduler thread.
  std::vector<SequencePtr> running_;
  std::deque<SequencePtr> waiting_;  // oldest first (preempted ones go back in arrival order)
  std::vector<int> free_slots_;
  uint64_t next_arrival_ = 0;
  model::Batch batch_;
  model::Logits logits_;
  int64_t steps_ = 0;
  bool watched_ = false;                    // someone watches the trace (checked once a step)
  std::vector<StepRecord> pending_steps_;   // since the last snapshot
  std::vector<std::string> pending_preempted_;
  std::chrono::steady_clock::time_point last_snapshot_;
  bool idle_published_ = false;

  // Read by metrics() from any thread.
  std::atomic<int64_t> running_count_ = 0, kv_used_blocks_ = 0;
  std::atomic<uint64_t> preemptions_ = 0;
  std::atomic<int64_t> kv_cached_blocks_ = 0;
  std::atomic<uint64_t> prefix_lookups_ = 0, prefix_hit_tokens_ = 0, prefix_miss_tokens_ = 0, prefix_evictions_ = 0,
                        prefix_logits_hits_ = 0;
  std::atomic<uint64_t> decode_steps_ = 0, generated_tokens_ = 0, verify_steps_ = 0, draft_tokens_ = 0,
                        accepted_tokens_ = 0;
  mutable std::mutex histogram_mutex_;
  CountHistogram batch_sequences_;

  std::atomic<bool> stopping_ = false;
  std::thread worker_;  // last: it starts once everything above exists
};

}  // namespace nanoserve::engine
