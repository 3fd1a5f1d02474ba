#include "engine/batch_engine.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "engine/defaults.h"
#include "engine/draft_model.h"
#include "engine/model_metadata.h"
#include "engine/prompt_lookup.h"

namespace nanoserve::engine {
namespace {

// The pool's capacity in positions: what --kv-memory buys (whole blocks), else a full
// context for every slot.
int64_t pool_positions(const BatchOptions& options, const model::ModelConfig& config) {
  if (options.parallel < 1) throw std::invalid_argument("the batch engine needs at least one parallel sequence");
  if (options.kv_memory_bytes <= 0) return context_size_for(options.context_size, config.n_ctx_train) * options.parallel;
  const int64_t block = model::KvCache::kDefaultBlockSize;
  const int64_t block_bytes = model::kv_bytes_per_position(config) * block;
  const int64_t blocks = options.kv_memory_bytes / block_bytes;
  if (blocks < 1)
    throw std::invalid_argument("the KV memory (" + std::to_string(options.kv_memory_bytes) +
                                " bytes) is less than one block of " + std::to_string(block) + " positions (" +
                                std::to_string(block_bytes) + " bytes for this model)");
  return blocks * block;
}

std::unique_ptr<model::KvDiskCache> disk_tier(const BatchOptions& options, const model::Model& model,
                                              const model::KvCache& cache) {
  if (options.cache_dir.empty()) {
    if (options.cache_disk_bytes != 0) throw std::invalid_argument("--cache-disk needs --cache-dir");
    return nullptr;
  }
  if (!options.prefix_cache) throw std::invalid_argument("--cache-dir needs the prefix cache (--prefix-cache on)");
  if (!cache.shares_prefixes())
    throw std::invalid_argument("--cache-dir: this model's sliding-window layers keep only their window, so its "
                                "prefixes are not cached");
  if (options.cache_disk_bytes <= 0) throw std::invalid_argument("--cache-disk must be positive");
  return std::make_unique<model::KvDiskCache>(model::KvDiskOptions{
      .dir = options.cache_dir,
      .max_bytes = options.cache_disk_bytes,
      .fingerprint = model::kv_fingerprint(model.file(), model.config(), cache.block_size()),
      .block_size = cache.block_size(),
      .block_bytes = cache.block_bytes()});
}

std::shared_ptr<Drafter> make_drafter(const BatchOptions& options, model::Model& target, int64_t context_size) {
  if (options.draft_max < 1) throw std::invalid_argument("--draft-max must be at least 1");
  if (options.spec != SpecMode::Draft && !options.draft_model_path.empty())
    throw std::invalid_argument("--draft-model needs --spec draft");
  if (options.test_drafter) return options.test_drafter;
  switch (options.spec) {
    case SpecMode::Off:
      return nullptr;
    case SpecMode::Lookup:
      return std::make_shared<PromptLookup>();
    case SpecMode::Draft:
      if (options.draft_model_path.empty()) throw std::invalid_argument("--spec draft needs --draft-model");
      return std::make_shared<DraftModel>(DraftModelOptions{.path = options.draft_model_path,
                                                            .n_seq = options.parallel,
                                                            .context_size = context_size,
                                                            .draft_max = options.draft_max},
                                          target);
  }
  return nullptr;
}

// Prompts whose logits are kept: 4 per slot, 32 at most. An entry is n_vocab floats (0.6 MB
// for a 152k vocabulary), a small part of the KV blocks that a prompt long enough to matter holds.
constexpr size_t kLastLogitsPerSlot = 4, kLastLogitsMax = 32;

// A sequence's part of a step: a chunk of n rows from position `cached` of its n_tokens (past
// them: draft tokens). A chunk that starts in the prompt is prefill (recompute, after a
// preemption), one that starts before the last token recomputes generated tokens.
TimelineEvent step_event(int64_t cached, int64_t n, int64_t n_tokens, int64_t prompt_tokens, bool preempted_before) {
  using Kind = TimelineEvent::Kind;
  Kind kind = Kind::Decode;
  if (cached < prompt_tokens)
    kind = preempted_before ? Kind::Recompute : Kind::Prefill;
  else if (cached < n_tokens - 1)
    kind = Kind::Recompute;
  else if (cached + n > n_tokens)
    kind = Kind::Verify;
  return {.kind = kind, .start_ms = 0, .end_ms = 0, .step = -1, .tokens = n, .accepted = 0, .batch_rows = 0,
          .batch_sequences = 0};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const std::vector<int64_t>& BatchEngine::batch_size_bounds() {
  static const std::vector<int64_t> bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  return bounds;
}

BatchEngine::BatchEngine(const BatchOptions& options)
    : model_(options.model_path, {.threads = options.threads, .kv_type = options.kv_type}),
      tokenizer_(tokenizer::Tokenizer::from_gguf(model_.file().metadata())),
      model_name_(engine::model_name(model_.file().metadata(), options.model_path)),
      chat_template_(engine::chat_template(model_.file().metadata())),
      model_facts_(engine::model_facts(model_.file(), model::kv_type_name(model_.config().kv_type))),
      cache_(model_.config(), pool_positions(options, model_.config()), options.parallel,
             model::KvCache::kDefaultBlockSize, options.prefix_hash),
      context_size_(model_.set_context(
          std::min(context_size_for(options.context_size, model_.config().n_ctx_train), cache_.n_ctx()))),
      prefix_cache_(options.prefix_cache && cache_.shares_prefixes()),
      last_logits_(std::min(kLastLogitsMax, kLastLogitsPerSlot * static_cast<size_t>(std::max(1, options.parallel)))),
      disk_(disk_tier(options, model_, cache_)),
      block_buffer_(disk_ ? cache_.block_bytes() : 0),
      scheduler_({.max_running = options.parallel, .step_tokens = options.step_tokens,
                  .block_size = cache_.block_size()}),
      queue_(options.queue_limit, options.parallel),
      drafter_(make_drafter(options, model_, context_size_)),
      draft_max_(options.draft_max),
      draft_always_(options.draft_always),
      draft_policy_(options.parallel, options.parallel * (options.draft_max + 1),
                    !(drafter_ && drafter_->guesses_are_free())),
      batch_sequences_{.bounds = batch_size_bounds(), .counts = std::vector<uint64_t>(batch_size_bounds().size() + 1),
                       .sum = 0},
      worker_([this] { serve(); }) {
  for (int slot = options.parallel - 1; slot >= 0; --slot) free_slots_.push_back(slot);
}

BatchEngine::~BatchEngine() {
  stopping_ = true;
  queue_.close();
  worker_.join();
}

std::shared_ptr<Stream> BatchEngine::submit(GenerationRequest request) {
  return queue_.submit(std::move(request), tokenizer_, model_.config().n_vocab, context_size_);
}

EngineMetrics BatchEngine::metrics() const {
  EngineMetrics m;
  // Every request holds a place in the queue until its final event, wherever it waits.
  m.running = running_count_;
  m.waiting = std::max<int64_t>(0, queue_.held() - m.running);
  m.kv_used_blocks = kv_used_blocks_;
  m.kv_total_blocks = cache_.n_blocks();
  m.kv_used_bytes = static_cast<int64_t>(cache_.used_bytes());
  m.kv_total_bytes = static_cast<int64_t>(cache_.bytes());
  m.preemptions = preemptions_;
  m.kv_cached_blocks = kv_cached_blocks_;
  m.prefix_lookups = prefix_lookups_;
  m.prefix_hit_tokens = prefix_hit_tokens_;
  m.prefix_miss_tokens = prefix_miss_tokens_;
  m.prefix_evictions = prefix_evictions_;
  m.prefix_logits_hits = prefix_logits_hits_;
  m.decode_steps = decode_steps_;
  m.generated_tokens = generated_tokens_;
  m.verify_steps = verify_steps_;
  m.draft_tokens = draft_tokens_;
  m.accepted_tokens = accepted_tokens_;
  if (disk_) m.prefix_disk = disk_->stats();
  std::lock_guard lock(histogram_mutex_);
  m.batch_sequences = batch_sequences_;
  return m;
}

void BatchEngine::serve() {
  while (!stopping_) {
    const bool idle = running_.empty() && waiting_.empty();
    for (std::unique_ptr<Generation>& generation : queue_.take_all(idle)) {
      auto seq = std::make_unique<Sequence>();
      seq->tokens = generation->request().prompt;
      seq->arrival = next_arrival_++;
      seq->caching = prefix_cache_ && generation->request().cache_prompt;
      seq->speculating = drafter_ && generation->request().speculative;
      seq->waiting_since = generation->submitted();
      seq->timeline = trace_.open(generation->request().id, generation->submitted());
      generation->stream()->set_timeline(seq->timeline);
      seq->generation = std::move(generation);
      waiting_.push_back(std::move(seq));
    }
    publish();
    if (stopping_) break;
    try {
      step();
    } catch (const std::exception& e) {  // not the forward pass (step handles that): state unknown
      fail_all_running(e.what());
    }
  }
  for (SequencePtr& seq : running_) seq->generation->finish(FinishReason::Cancelled);
  for (SequencePtr& seq : waiting_) seq->generation->finish(FinishReason::Cancelled);
  running_.clear();
  waiting_.clear();
  publish();
}

void BatchEngine::step() {
  watched_ = trace_.watched();
  retire_cancelled();
  std::vector<SequenceView> running_view, waiting_view;
  for (const SequencePtr& s : running_)
    running_view.push_back({.arrival = s->arrival, .tokens = static_cast<int64_t>(s->tokens.size()),
                            .cached = s->cached, .blocks = cache_.blocks_of(s->slot),
                            .shared = prefix_cache_ ? cache_.shared_blocks(s->slot) : 0});
  if (drafter_) draft(running_view);
  // Only those that a free slot could admit this step are looked up in the prefix cache.
  for (const SequencePtr& s : waiting_)
    waiting_view.push_back(waiting_view.size() < free_slots_.size()
                               ? waiting_view_of(*s, waiting_view.size())
                               : SequenceView{.arrival = s->arrival, .tokens = static_cast<int64_t>(s->tokens.size())});
  const StepPlan plan = scheduler_.plan(running_view, waiting_view, cache_.free_blocks());

  // Who each index of the plan names, before anything moves.
  std::vector<Sequence*> named(running_.size() + plan.admitted);
  for (size_t i = 0; i < running_.size(); ++i) named[i] = running_[i].get();
  for (size_t i : plan.preempted) preempt(*named[i]);
  if (plan.admitted > free_slots_.size() || plan.admitted > waiting_.size())
    throw std::logic_error("batch engine: the plan admits more sequences than there are slots");
  bool answered = false;  // an admitted sequence finished on its first token, from cached logits
  for (size_t k = 0; k < plan.admitted; ++k) {
    SequencePtr seq = std::move(waiting_.front());
    waiting_.pop_front();
    start(*seq);
    answered = answered || seq->generation->finished();
    named[running_view.size() + k] = seq.get();
    running_.push_back(std::move(seq));
  }

  std::vector<Sequence*> stepping;
  std::vector<int64_t> chunk_sizes;
  bool preempted = !plan.preempted.empty();
  for (const StepPlan::Chunk& chunk : plan.chunks) {
    Sequence& seq = *named[chunk.seq];
    if (seq.generation->finished()) continue;  // answered as it started
    if (!cache_.reserve(seq.slot, seq.cached + chunk.n)) {  // the plan and the pool disagree: never expected
      preempt(seq);
      preempted = true;
      continue;
    }
    stepping.push_back(&seq);
    chunk_sizes.push_back(chunk.n);
  }
  // Preempted sequences wait again, in arrival order.
  for (SequencePtr& seq : running_)
    if (seq->slot < 0) requeue(std::move(seq));
  std::erase(running_, nullptr);

  if (!stepping.empty()) {
    evaluate(stepping, chunk_sizes);
  } else if (preempted || answered) {
    // The plan made progress without a forward pass.
  } else if (!waiting_.empty() && running_.empty()) {
    // Never expected (a request that fits the context fits the empty pool); never spin on it.
    waiting_.front()->generation->fail("the request does not fit the KV cache");
    waiting_.pop_front();
  } else if (!running_.empty()) {
    running_.back()->generation->fail("the scheduler could not place the request");
  }
  std::erase_if(running_, [](const SequencePtr& s) { return s->generation->finished(); });
  publish();
  snapshot_if_watched(preempted);
}

void BatchEngine::draft(std::vector<SequenceView>& running_view) {
  // Every running sequence is a candidate, those that cannot draft now (taking in their prompts,
  // not speculating, no room) with nothing available: the batch's steps go on while any of them
  // has tokens left, which the policy weighs.
  std::vector<DraftPolicy::Candidate> candidates;
  int64_t decoders = 0;
  bool any_room = false;
  for (const SequencePtr& s : running_) {
    Sequence& seq = *s;
    seq.draft.clear();
    seq.guess.clear();
    // Tokens it may still generate, and room for the drafts and the token after them: max_tokens,
    // and the context's positions.
    const GenerationRequest& r = seq.generation->request();
    const auto generated = static_cast<int64_t>(seq.tokens.size() - r.prompt.size());
    const auto positions_left = context_size_ - static_cast<int64_t>(seq.tokens.size());
    const int64_t left = std::min(r.max_tokens - generated, positions_left);
    const int64_t room = std::min({draft_max_, r.max_tokens - generated - 1, positions_left});
    const bool decoding = static_cast<int64_t>(seq.tokens.size()) - seq.cached == 1;  // else taking in its prompt
    decoders += decoding ? 1 : 0;
    DraftPolicy::Candidate c{.slot = seq.slot, .remaining = left};
    if (decoding && seq.speculating && room > 0) {
      c.available = drafter_->available(seq.tokens, room);
      c.intake = drafter_->intake(seq.slot, seq.tokens);
      any_room = true;
    }
    candidates.push_back(c);
  }
  if (!any_room) return;
  const int64_t step_tokens = scheduler_.limits().step_tokens;
  std::vector<int64_t> lengths;
  if (draft_always_) {
    for (const DraftPolicy::Candidate& c : candidates) lengths.push_back(c.available);
  } else {
    // The batch's sequences to come: the running ones and those waiting for a free slot.
    const size_t sequences = running_.size() + std::min(waiting_.size(), free_slots_.size());
    lengths = draft_policy_.allocate(decoders, step_tokens - decoders, candidates, static_cast<int64_t>(sequences));
  }
  std::vector<DraftAsk> asks;
  for (size_t k = 0; k < candidates.size(); ++k) {
    Sequence& seq = *running_[k];
    if (lengths[k] > 0)
      asks.push_back({.slot = seq.slot, .tokens = seq.tokens, .max = lengths[k], .out = &seq.draft});
    else if (drafter_->guesses_are_free() && candidates[k].available > 0)
      asks.push_back({.slot = seq.slot, .tokens = seq.tokens, .max = 1, .out = &seq.guess});
  }
  if (asks.empty()) return;
  const auto started = std::chrono::steady_clock::now();
  const PromptIntake prompts = drafter_->propose(asks);
  int64_t rounds = 0, tokens = 0;
  for (const DraftAsk& ask : asks) rounds = std::max(rounds, ask.max), tokens += ask.max;
  draft_policy_.record_drafting(rounds, tokens, seconds_since(started) - prompts.seconds);
  draft_policy_.record_intake(prompts.tokens, prompts.seconds);
  for (size_t k = 0; k < candidates.size(); ++k) {
    Sequence& seq = *running_[k];
    if (static_cast<int64_t>(seq.draft.size()) > lengths[k]) seq.draft.resize(static_cast<size_t>(lengths[k]));
    running_view[k].drafts = static_cast<int64_t>(seq.draft.size());
  }
}

void BatchEngine::evaluate(const std::vector<Sequence*>& stepping, const std::vector<int64_t>& chunk_sizes) {
  batch_.clear();
  std::vector<size_t> first_logits_row(stepping.size());  // each sequence's first row of logits_
  std::vector<TimelineEvent> events(stepping.size());  // each sequence's part of the step, for its timeline
  size_t logits_rows = 0;
  for (size_t i = 0; i < stepping.size(); ++i) {
    Sequence& seq = *stepping[i];
    const auto n_tokens = static_cast<int64_t>(seq.tokens.size());
    first_logits_row[i] = logits_rows;
    events[i] = step_event(seq.cached, chunk_sizes[i], n_tokens,
                           static_cast<int64_t>(seq.generation->request().prompt.size()), seq.preemptions > 0);
    // Past the last token come the draft tokens the plan made room for; each row from the last
    // token on asks for logits.
    for (int64_t pos = seq.cached; pos < seq.cached + chunk_sizes[i]; ++pos) {
      const int32_t token = pos < n_tokens ? seq.tokens[pos] : seq.draft[static_cast<size_t>(pos - n_tokens)];
      const bool logits = pos + 1 >= n_tokens;
      batch_.add(seq.slot, pos, token, logits);
      logits_rows += logits ? 1 : 0;
    }
  }
  {
    std::lock_guard lock(histogram_mutex_);
    const auto n = static_cast<int64_t>(stepping.size());
    const auto& b = batch_sequences_.bounds;
    ++batch_sequences_.counts[std::lower_bound(b.begin(), b.end(), n) - b.begin()];
    batch_sequences_.sum += n;
  }

  const auto started = std::chrono::steady_clock::now();
  try {
    model_.forward(batch_, cache_, logits_);
  } catch (const std::exception& e) {
    for (Sequence* seq : stepping) seq->generation->fail(e.what());  // each gives its blocks back
    return;
  }

  // Tokens are chosen, rejected drafts dropped from the cache and whole blocks published before
  // any token is emitted: a sequence whose text ends here lets go of its blocks at its final event.
  std::vector<std::vector<int32_t>> chosen(stepping.size());
  for (size_t i = 0; i < stepping.size(); ++i) {
    Sequence& seq = *stepping[i];
    const auto n_tokens = static_cast<int64_t>(seq.tokens.size());
    seq.cached += chunk_sizes[i];
    if (seq.cached >= n_tokens) {
      const int64_t drafted = seq.cached - n_tokens;
      if (seq.caching && n_tokens == static_cast<int64_t>(seq.generation->request().prompt.size()))
        last_logits_.put(seq.tokens, logits_.row(first_logits_row[i]));  // the prompt's: no drafts yet
      chosen[i] = verify(seq, first_logits_row[i], drafted);
      if (seq.generation->finished()) continue;  // it failed, and let go of its slot
      const auto accepted = static_cast<int64_t>(chosen[i].size()) - 1;
      events[i].accepted = std::max<int64_t>(0, accepted);
      if (drafted > 0) {
        seq.cached = n_tokens + accepted;
        cache_.truncate(seq.slot, seq.cached);
        draft_policy_.record_verify(seq.slot, drafted, accepted);
      } else if (!seq.guess.empty()) {
        draft_policy_.record_guess(seq.slot, seq.guess.front() == chosen[i].front());
      }
      seq.tokens.insert(seq.tokens.end(), chosen[i].begin(), chosen[i].end());
      seq.generation->count_step(drafted, accepted);
      ++decode_steps_;
      generated_tokens_ += chosen[i].size();
      if (drafted > 0) {
        ++verify_steps_;
        draft_tokens_ += static_cast<uint64_t>(drafted);
        accepted_tokens_ += static_cast<uint64_t>(accepted);
      }
    }
    seq.generation->hold_kv(cache_.blocks_of(seq.slot), static_cast<int64_t>(cache_.bytes_of(seq.slot)));
    if (seq.caching) {
      cache_.extend_chain(seq.tokens, seq.hashes);
      cache_.publish(seq.slot, seq.tokens, seq.hashes);
    }
  }
  // The step's cost by its rows: the forward pass and the choices at its logits rows (a draft
  // row costs a choice too: logit_bias and the sampler over the vocabulary).
  const auto ended = std::chrono::steady_clock::now();
  draft_policy_.record_step(static_cast<int64_t>(batch_.size()), std::chrono::duration<double>(ended - started).count());
  record_steps(stepping, events, started, ended);
  for (size_t i = 0; i < stepping.size(); ++i) {
    Sequence& seq = *stepping[i];
    try {
      for (int32_t token : chosen[i])
        if (!seq.generation->emit(token)) break;
    } catch (const std::exception& e) {
      seq.generation->fail(e.what());
    }
  }
}

std::vector<int32_t> BatchEngine::verify(Sequence& seq, size_t first_row, int64_t drafted) {
  std::vector<int32_t> out;
  try {
    for (int64_t j = 0; j <= drafted; ++j) {
      out.push_back(seq.generation->choose(logits_.row(first_row + static_cast<size_t>(j))));
      if (j == drafted || out.back() != seq.draft[static_cast<size_t>(j)]) break;
    }
  } catch (const std::exception& e) {
    seq.generation->fail(e.what());
    out.clear();
  }
  return out;
}

void BatchEngine::retire_cancelled() {
  for (SequencePtr& seq : running_)
    if (seq->generation->cancelled()) seq->generation->finish(FinishReason::Cancelled);  // frees its blocks first
  std::erase_if(running_, [](const SequencePtr& s) { return s->generation->finished(); });
  std::erase_if(waiting_, [](const SequencePtr& s) {
    if (!s->generation->cancelled()) return false;
    s->generation->finish(FinishReason::Cancelled);
    s->timeline->mark(TimelineEvent::Kind::Finished);
    return true;
  });
}

// A waiting sequence as the scheduler sees it: what it would start with from the prefix cache.
SequenceView BatchEngine::waiting_view_of(Sequence& seq, size_t queue_index) {
  SequenceView view{.arrival = seq.arrival, .tokens = static_cast<int64_t>(seq.tokens.size())};
  if (!seq.caching) return view;
  cache_.extend_chain(seq.tokens, seq.hashes);
  if (disk_) load_from_disk(seq);
  const model::KvCache::PrefixHit hit = find_prefix(seq);
  view.cached = hit.positions;
  if (view.cached == view.tokens) ++view.tokens;  // its first token, chosen as it starts
  view.blocks = static_cast<int64_t>(hit.blocks.size()) + (hit.copied >= 0 ? 1 : 0);
  view.attach_cost = hit.pool_cost;
  view.held = held(seq, static_cast<int64_t>(hit.blocks.size()), queue_index);
  return view;
}

// Whether the block that would follow seq's cached ones (the same chain hash at the same index:
// the same prefix, or a collision, which only delays seq) is being computed by a running
// sequence, or will be by one of the `earlier` sequences waiting before it (admitted first).
bool BatchEngine::held(const Sequence& seq, int64_t cached_blocks, size_t earlier) const {
  const auto next = static_cast<size_t>(cached_blocks);
  if (next >= seq.hashes.size()) return false;
  const auto computes_next = [&](const Sequence& other) {
    return other.caching && next < other.hashes.size() && other.hashes[next] == seq.hashes[next] &&
           other.cached < static_cast<int64_t>(next + 1) * cache_.block_size();
  };
  for (const SequencePtr& r : running_)
    if (computes_next(*r)) return true;
  for (size_t i = 0; i < earlier; ++i)
    if (computes_next(*waiting_[i])) return true;
  return false;
}

void BatchEngine::start(Sequence& seq) {
  seq.slot = free_slots_.back();
  free_slots_.pop_back();
  seq.cached = 0;
  if (seq.caching) {
    // Looked up again: a sequence admitted before it in this step may have taken a block of its
    // earlier hit.
    cache_.extend_chain(seq.tokens, seq.hashes);
    const auto n = static_cast<int64_t>(seq.tokens.size());
    const model::KvCache::PrefixHit hit = find_prefix(seq);
    if (hit.pool_cost <= cache_.free_blocks()) {
      cache_.attach(seq.slot, hit);
      seq.cached = hit.positions;
    }
    ++prefix_lookups_;
    prefix_hit_tokens_ += static_cast<uint64_t>(seq.cached);
    prefix_miss_tokens_ += static_cast<uint64_t>(n - seq.cached);
  }
  seq.generation->admit(seq.cached);
  const auto now = std::chrono::steady_clock::now();
  seq.timeline->add({.kind = TimelineEvent::Kind::Queued, .start_ms = seq.timeline->ms_since_submit(seq.waiting_since),
                     .end_ms = seq.timeline->ms_since_submit(now), .tokens = seq.cached});
  seq.generation->on_final_event([this, &seq] {
    release(seq);
    seq.timeline->mark(TimelineEvent::Kind::Finished);
  });
  draft_policy_.admitted();
  if (seq.speculating) draft_policy_.start(seq.slot);
  if (seq.cached == static_cast<int64_t>(seq.tokens.size())) choose_from_cached_logits(seq);
}

model::KvCache::PrefixHit BatchEngine::find_prefix(const Sequence& seq) const {
  const auto n = static_cast<int64_t>(seq.tokens.size());
  return cache_.find_prefix(seq.tokens, seq.hashes, last_logits_.contains(seq.tokens) ? n : n - 1);
}

void BatchEngine::choose_from_cached_logits(Sequence& seq) {
  const std::span<const float> logits = last_logits_.find(seq.tokens);
  if (logits.empty()) throw std::logic_error("batch engine: a sequence started with no logits to choose from");
  try {
    const int32_t token = seq.generation->choose(logits);
    seq.tokens.push_back(token);
    ++prefix_logits_hits_;
    seq.generation->hold_kv(cache_.blocks_of(seq.slot), static_cast<int64_t>(cache_.bytes_of(seq.slot)));
    seq.generation->emit(token);
  } catch (const std::exception& e) {
    seq.generation->fail(e.what());
  }
}

void BatchEngine::load_from_disk(Sequence& seq) {
  const int64_t block = cache_.block_size();
  const auto n = static_cast<int64_t>(seq.tokens.size());
  const model::KvCache::PrefixHit in_pool = cache_.find_prefix(seq.tokens, seq.hashes, n);
  int32_t parent = in_pool.blocks.empty() ? -1 : in_pool.blocks.back();
  // At most what leaves room for the whole sequence besides: read blocks never crowd out the
  // positions it must compute, nor evict one another.
  const int64_t room = cache_.free_blocks() - scheduler_.blocks_for(n);
  for (size_t i = in_pool.blocks.size(), read = 0; i < seq.hashes.size() && static_cast<int64_t>(read) < room;
       ++i, ++read) {
    if (!disk_->contains(seq.hashes[i])) return;
    const std::span<const int32_t> prefix(seq.tokens.data(), (i + 1) * static_cast<size_t>(block));
    if (!disk_->load(seq.hashes[i], prefix, block_buffer_)) return;
    parent = cache_.adopt(parent, seq.hashes[i], prefix.last(static_cast<size_t>(block)), block_buffer_);
    if (parent < 0) return;
  }
}

void BatchEngine::spill(const Sequence& seq) {
  const int64_t block = cache_.block_size();
  for (int64_t i = 0; i < cache_.published_blocks(seq.slot); ++i) {
    const uint64_t hash = seq.hashes[static_cast<size_t>(i)];
    if (disk_->contains(hash)) continue;
    cache_.read_block(seq.slot, i, block_buffer_);
    if (!disk_->store(hash, std::span(seq.tokens).first(static_cast<size_t>((i + 1) * block)), block_buffer_)) return;
  }
}

void BatchEngine::preempt(Sequence& seq) {
  seq.generation->on_final_event(nullptr);
  release(seq);
  seq.slot = -1;
  seq.cached = 0;
  seq.guess.clear();  // a guess for the step it leaves
  ++preemptions_;
  ++seq.preemptions;
  seq.waiting_since = std::chrono::steady_clock::now();
  seq.timeline->mark(TimelineEvent::Kind::Preempted, seq.waiting_since);
  if (watched_) pending_preempted_.push_back(seq.generation->request().id);
}

void BatchEngine::release(Sequence& seq) {
  draft_policy_.released(/*others_run=*/slots_held() > 1);
  if (disk_ && seq.caching) spill(seq);
  cache_.clear(seq.slot);
  free_slots_.push_back(seq.slot);
  publish();
}

void BatchEngine::requeue(SequencePtr seq) {
  const auto at = std::upper_bound(waiting_.begin(), waiting_.end(), seq->arrival,
                                   [](uint64_t arrival, const SequencePtr& s) { return arrival < s->arrival; });
  waiting_.insert(at, std::move(seq));
}

void BatchEngine::fail_all_running(const std::string& error) {
  for (SequencePtr& seq : running_)
    if (seq) seq->generation->fail(error);
  running_.clear();
  publish();
}

int64_t BatchEngine::slots_held() const {
  return static_cast<int64_t>(cache_.n_seq()) - static_cast<int64_t>(free_slots_.size());
}

void BatchEngine::publish() {
  running_count_ = slots_held();
  kv_used_blocks_ = cache_.used_blocks();
  kv_cached_blocks_ = cache_.cached_blocks();
  prefix_evictions_ = cache_.evictions();
}

void BatchEngine::record_steps(const std::vector<Sequence*>& stepping, std::vector<TimelineEvent>& events,
                               std::chrono::steady_clock::time_point started,
                               std::chrono::steady_clock::time_point ended) {
  StepRecord record{.step = steps_, .start_ms = trace_.ms_since_start(started),
                    .duration_ms = std::chrono::duration<double, std::milli>(ended - started).count(),
                    .rows = static_cast<int64_t>(batch_.size()), .prefill_rows = 0, .draft_rows = 0,
                    .sequences = static_cast<int64_t>(stepping.size())};
  for (size_t i = 0; i < stepping.size(); ++i) {
    TimelineEvent& event = events[i];
    RequestTimeline& timeline = *stepping[i]->timeline;
    event.start_ms = timeline.ms_since_submit(started);
    event.end_ms = timeline.ms_since_submit(ended);
    event.step = steps_;
    event.batch_rows = record.rows;
    event.batch_sequences = record.sequences;
    timeline.add(event);
    if (event.kind == TimelineEvent::Kind::Prefill || event.kind == TimelineEvent::Kind::Recompute)
      record.prefill_rows += event.tokens;
    if (event.kind == TimelineEvent::Kind::Verify) record.draft_rows += event.tokens - 1;
  }
  ++steps_;
  if (watched_) pending_steps_.push_back(record);  // trimmed to kMaxSteps when a snapshot takes them
}

SequenceState BatchEngine::state_of(const Sequence& seq) const {
  SequenceState state{.id = seq.generation->request().id, .running = seq.slot >= 0,
                      .prompt_tokens = static_cast<int64_t>(seq.generation->request().prompt.size()),
                      .tokens = static_cast<int64_t>(seq.tokens.size()), .cached = seq.cached,
                      .preemptions = seq.preemptions, .blocks = {}};
  if (seq.slot >= 0) state.blocks = block_runs(cache_.block_table(seq.slot));
  return state;
}

void BatchEngine::snapshot_if_watched(bool preempted) {
  if (!watched_) {
    pending_steps_.clear();
    pending_preempted_.clear();
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const bool idle = running_.empty() && waiting_.empty();
  const bool due = now - last_snapshot_ >= EngineTrace::kSnapshotInterval;
  if (!(preempted || due || (idle && !idle_published_))) return;
  if (pending_steps_.size() > EngineTrace::kMaxSteps)
    pending_steps_.erase(pending_steps_.begin(),
                         pending_steps_.end() - static_cast<std::ptrdiff_t>(EngineTrace::kMaxSteps));
  EngineSnapshot snapshot{.time_ms = trace_.ms_since_start(now), .steps = steps_,
                          .recent_steps = std::move(pending_steps_), .sequences = {},
                          .block_size = cache_.block_size(), .total_blocks = cache_.n_blocks(),
                          .free_blocks = cache_.free_blocks(), .cached_blocks = {}, .shared_blocks = {},
                          .preemptions = preemptions_, .preempted = std::move(pending_preempted_)};
  std::vector<int32_t> shared;
  for (const SequencePtr& seq : running_) {
    snapshot.sequences.push_back(state_of(*seq));
    for (const int32_t b : cache_.block_table(seq->slot))
      if (cache_.holders(b) > 1) shared.push_back(b);
  }
  for (const SequencePtr& seq : waiting_) snapshot.sequences.push_back(state_of(*seq));
  std::sort(shared.begin(), shared.end());
  shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
  snapshot.shared_blocks = block_runs(shared);
  std::vector<int32_t> idle_blocks = cache_.idle_blocks();
  std::sort(idle_blocks.begin(), idle_blocks.end());
  snapshot.cached_blocks = block_runs(idle_blocks);
  trace_.publish(std::move(snapshot));
  pending_steps_.clear();
  pending_preempted_.clear();
  last_snapshot_ = now;
  idle_published_ = idle;
}

}  // namespace nanoserve::engine
