#include "engine/batch_engine.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "engine/model_metadata.h"

namespace nanoserve::engine {
BatchEngine::BatchEngine(const BatchOptions& options)
    : model_(options.model_path, {.threads = options.threads, .kv_type = options.kv_type,
                                  .mtp = options.spec == SpecMode::Mtp || options.spec == SpecMode::Auto}),
      tokenizer_(tokenizer::Tokenizer::from_gguf(model_.file().metadata())),
      model_name_(engine::model_name(model_.file().metadata(), options.model_path)),
      chat_template_(engine::chat_template(model_.file().metadata())),
      model_facts_(engine::model_facts(model_.file(), model::kv_type_name(model_.config().kv_type))),
      pool_(model_.config(), pool_positions(options, model_.config()), options.parallel),
      context_size_(model_.set_context(
          std::min(context_size_for(options.context_size, model_.config().n_ctx_train), pool_.n_ctx()))),
      prefix_(pool_, prefix_options(options, model_)),
      scheduler_({.max_running = options.parallel, .step_tokens = options.step_tokens,
                  .block_size = pool_.block_size()}),
      queue_(options.queue_limit, options.parallel),
      drafting_(options, model_, pool_, context_size_),
      recorder_(trace_, pool_),
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
  recorder_.fill(m);
  // Every request holds a place in the queue until its final event, wherever it waits.
  m.waiting = std::max<int64_t>(0, queue_.held() - m.running);
  m.kv_total_blocks = pool_.n_blocks();
  m.kv_used_bytes = static_cast<int64_t>(pool_.used_bytes());
  m.kv_total_bytes = static_cast<int64_t>(pool_.bytes());
  const PrefixCacheStats prefix = prefix_.stats();
  m.prefix_lookups = prefix.lookups;
  m.prefix_hit_tokens = prefix.hit_tokens;
  m.prefix_miss_tokens = prefix.miss_tokens;
  m.prefix_logits_hits = prefix.logits_hits;
  if (prefix_.disk()) m.prefix_disk = prefix_.disk()->stats();
  return m;
}

void BatchEngine::serve() {
  while (!stopping_) {
    take_requests();
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

void BatchEngine::take_requests() {
  const bool idle = running_.empty() && waiting_.empty();
  for (std::unique_ptr<Generation>& generation : queue_.take_all(idle)) {
    auto seq = std::make_unique<Sequence>();
    seq->tokens = generation->request().prompt;
    seq->arrival = next_arrival_++;
    seq->caching = prefix_.enabled() && generation->request().cache_prompt;
    seq->speculating = drafting_.on() && generation->request().speculative;
    seq->waiting_since = generation->submitted();
    seq->timeline = trace_.open(generation->request().id, generation->submitted());
    generation->stream()->set_timeline(seq->timeline);
    seq->generation = std::move(generation);
    waiting_.push_back(std::move(seq));
  }
}

void BatchEngine::step() {
  recorder_.begin_step();
  retire_cancelled();
  std::vector<SequenceView> running_view = running_views();
  if (drafting_.on()) {
    std::vector<Sequence*> running;
    for (const SequencePtr& s : running_) running.push_back(s.get());
    // The batch's sequences to come: the running ones and those waiting for a free slot.
    const size_t to_come = running_.size() + std::min(waiting_.size(), free_slots_.size());
    drafting_.draft(running, running_view, scheduler_.limits().step_tokens, static_cast<int64_t>(to_come));
  }
  const StepPlan plan = scheduler_.plan(running_view, waiting_views(), pool_.free_blocks());
  const Work work = carry_out(plan);
  if (!work.stepping.empty()) evaluate(work);
  else if (!work.preempted && !work.answered) give_up_if_stuck();
  std::erase_if(running_, [](const SequencePtr& s) { return s->generation->finished(); });
  publish();
  snapshot_if_watched(work.preempted);
}

std::vector<SequenceView> BatchEngine::running_views() {
  std::vector<SequenceView> views;
  for (const SequencePtr& s : running_)
    views.push_back({.arrival = s->arrival, .tokens = s->size(), .cached = s->cached,
                     .blocks = pool_.blocks_of(s->slot), .shared = prefix_.enabled() ? pool_.shared_blocks(s->slot) : 0});
  return views;
}

// Only those that a free slot could admit this step are looked up in the prefix cache.
std::vector<SequenceView> BatchEngine::waiting_views() {
  std::vector<SequenceView> views;
  for (const SequencePtr& s : waiting_)
    views.push_back(views.size() < free_slots_.size() ? waiting_view_of(*s, views.size())
                                                      : SequenceView{.arrival = s->arrival, .tokens = s->size()});
  return views;
}

// A waiting sequence as the scheduler sees it: what it would start with from the prefix cache.
SequenceView BatchEngine::waiting_view_of(Sequence& seq, size_t queue_index) {
  SequenceView view{.arrival = seq.arrival, .tokens = seq.size()};
  if (!seq.caching) return view;
  prefix_.extend_chain(seq.tokens, seq.hashes);
  // Blocks read back never crowd out the positions it must compute, nor evict one another.
  prefix_.prefetch(seq.tokens, seq.hashes, pool_.free_blocks() - scheduler_.blocks_for(seq.size()));
  const PrefixCache::Hit hit = prefix_.find_start(seq.tokens, seq.hashes);
  const model::KvCache::Attachment& a = hit.attachment;
  view.cached = a.positions;
  if (view.cached == view.tokens) ++view.tokens;  // its first token, chosen as it starts
  view.blocks = static_cast<int64_t>(a.blocks.size()) + (a.copied >= 0 ? 1 : 0);
  view.attach_cost = hit.pool_cost;
  view.held = held(seq, static_cast<int64_t>(a.blocks.size()), queue_index);
  return view;
}

// Whether the block that would follow seq's cached ones (the same chain hash at the same index:
// the same prefix, or a collision, which only delays seq) is being computed by a running
// sequence, or will be by one of the `earlier` sequences waiting before it (admitted first). That
// sequence then copies its recurrent state where their prefixes part (a hybrid model's).
bool BatchEngine::held(const Sequence& seq, int64_t cached_blocks, size_t earlier) {
  const auto next = static_cast<size_t>(cached_blocks);
  if (next >= seq.hashes.size()) return false;
  const auto computes_next = [&](Sequence& other) {
    if (!(other.caching && next < other.hashes.size() && other.hashes[next] == seq.hashes[next] &&
          other.cached < static_cast<int64_t>(next + 1) * pool_.block_size()))
      return false;
    size_t shared = next + 1;
    while (shared < seq.hashes.size() && shared < other.hashes.size() && seq.hashes[shared] == other.hashes[shared])
      ++shared;
    other.capture_hint = std::max(other.capture_hint, static_cast<int64_t>(shared) * pool_.block_size());
    return true;
  };
  for (const SequencePtr& r : running_)
    if (computes_next(*r)) return true;
  for (size_t i = 0; i < earlier; ++i)
    if (computes_next(*waiting_[i])) return true;
  return false;
}

// Preempts, admits and reserves as the plan says; preempted sequences wait again, in arrival order.
BatchEngine::Work BatchEngine::carry_out(const StepPlan& plan) {
  Work work;
  work.preempted = !plan.preempted.empty();
  // Who each index of the plan names, before anything moves.
  std::vector<Sequence*> named(running_.size() + plan.admitted);
  for (size_t i = 0; i < running_.size(); ++i) named[i] = running_[i].get();
  for (size_t i : plan.preempted) preempt(*named[i]);
  admit(plan.admitted, named, work);
  for (const StepPlan::Chunk& chunk : plan.chunks) {
    Sequence& seq = *named[chunk.seq];
    if (seq.generation->finished()) continue;  // answered as it started
    if (!pool_.reserve(seq.slot, seq.cached + chunk.n)) {  // the plan and the pool disagree: never expected
      preempt(seq);
      work.preempted = true;
      continue;
    }
    work.stepping.push_back(&seq);
    work.chunk_sizes.push_back(chunk.n);
  }
  for (SequencePtr& seq : running_)
    if (seq->slot < 0) requeue(std::move(seq));
  std::erase(running_, nullptr);
  return work;
}

void BatchEngine::admit(size_t n, std::vector<Sequence*>& named, Work& work) {
  if (n > free_slots_.size() || n > waiting_.size())
    throw std::logic_error("batch engine: the plan admits more sequences than there are slots");
  const size_t first = named.size() - n;
  for (size_t k = 0; k < n; ++k) {
    SequencePtr seq = std::move(waiting_.front());
    waiting_.pop_front();
    start(*seq);
    work.answered = work.answered || seq->generation->finished();
    named[first + k] = seq.get();
    running_.push_back(std::move(seq));
  }
}

// A plan with no progress: never expected (a request that fits the context fits the empty
// pool); never spin on it.
void BatchEngine::give_up_if_stuck() {
  if (!waiting_.empty() && running_.empty()) {
    waiting_.front()->generation->fail("the request does not fit the KV cache");
    waiting_.pop_front();
  } else if (!running_.empty()) {
    running_.back()->generation->fail("the scheduler could not place the request");
  }
}

void BatchEngine::evaluate(const Work& work) {
  std::vector<Part> parts = build_batch(work);
  recorder_.count_batch(static_cast<int64_t>(work.stepping.size()));
  const auto started = std::chrono::steady_clock::now();
  if (!forward(work)) return;
  // Tokens are chosen, rejected drafts dropped from the cache and whole blocks published before
  // any token is emitted: a sequence whose text ends here lets go of its blocks at its final event.
  std::vector<std::vector<int32_t>> chosen(work.stepping.size());
  for (size_t i = 0; i < work.stepping.size(); ++i) chosen[i] = choose(*work.stepping[i], work.chunk_sizes[i], parts[i]);
  if (drafting_.follows_steps()) follow(work, parts);
  publish_blocks(work);
  record(work, parts, started);
  emit(work, chosen);
}

std::vector<BatchEngine::Part> BatchEngine::build_batch(const Work& work) {
  batch_.clear();
  std::vector<Part> parts(work.stepping.size());
  size_t logits_rows = 0;
  for (size_t i = 0; i < work.stepping.size(); ++i) {
    Sequence& seq = *work.stepping[i];
    const int64_t n_tokens = seq.size(), chunk = work.chunk_sizes[i];
    parts[i] = {.first_logits_row = logits_rows, .first_row = batch_.size(), .from = seq.cached,
                .event = StepRecorder::step_event(seq.cached, chunk, n_tokens, seq.prompt_size(), seq.preemptions > 0)};
    if (seq.caching) prefix_.plan_capture(seq.slot, seq.cached, seq.cached + chunk, seq.capture_hint);
    // A recurrent state goes back to its copy after the last token if a draft is rejected.
    if (seq.cached + chunk > n_tokens)
      if (model::RecurrentStates* states = pool_.recurrent_states()) states->capture(seq.slot, n_tokens);
    // Past the last token come the draft tokens the plan made room for; each row from the last
    // token on asks for logits.
    for (int64_t pos = seq.cached; pos < seq.cached + chunk; ++pos) {
      const int32_t token = pos < n_tokens ? seq.tokens[pos] : seq.draft[static_cast<size_t>(pos - n_tokens)];
      const bool logits = pos + 1 >= n_tokens;
      batch_.add(seq.slot, pos, token, logits);
      logits_rows += logits ? 1 : 0;
    }
  }
  return parts;
}

bool BatchEngine::forward(const Work& work) {
  try {
    model_.forward(batch_, pool_, logits_);
    return true;
  } catch (const std::exception& e) {
    for (Sequence* seq : work.stepping) seq->generation->fail(e.what());  // each gives its blocks back
    return false;
  }
}

// A sequence's tokens of this step once its chunk reached its last token (none before): chosen
// at its logits rows while they agree with its drafts; the rejected drafts leave the cache.
std::vector<int32_t> BatchEngine::choose(Sequence& seq, int64_t chunk, Part& part) {
  const int64_t n_tokens = seq.size();
  seq.cached += chunk;
  if (seq.cached < n_tokens) return {};
  const int64_t drafted = seq.cached - n_tokens;
  if (seq.caching && n_tokens == seq.prompt_size())
    prefix_.keep_logits(seq.tokens, logits_.row(part.first_logits_row));  // the prompt's: no drafts yet
  std::vector<int32_t> chosen = verify(seq, part.first_logits_row, drafted);
  if (seq.generation->finished()) return chosen;  // it failed, and let go of its slot
  const auto accepted = static_cast<int64_t>(chosen.size()) - 1;
  part.event.accepted = std::max<int64_t>(0, accepted);
  if (drafted > 0) {
    seq.cached = n_tokens + accepted;
    // A recurrent state cannot drop only the rejected drafts: it goes back to its copy after the
    // last token, and the accepted ones are computed again in the next step.
    if (!pool_.can_truncate(seq.slot, seq.cached)) seq.cached = n_tokens;
    pool_.truncate(seq.slot, seq.cached);
    drafting_.policy().record_verify(seq.slot, drafted, accepted);
  } else if (!seq.guess.empty()) {
    drafting_.policy().record_guess(seq.slot, seq.guess.front() == chosen.front());
  }
  seq.tokens.insert(seq.tokens.end(), chosen.begin(), chosen.end());
  seq.generation->count_step(drafted, accepted);
  recorder_.count_choice(static_cast<int64_t>(chosen.size()), drafted, accepted);
  return chosen;
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

// The drafter that reads hidden states (the MTP block) takes in the positions each speculating
// sequence kept. One that does not speculate costs it nothing (its blocks then carry no keys and
// values of the block: a later draft from them is worse, never wrong).
void BatchEngine::follow(const Work& work, const std::vector<Part>& parts) {
  std::vector<StepKept> kept;
  for (size_t i = 0; i < work.stepping.size(); ++i) {
    const Sequence& seq = *work.stepping[i];
    if (seq.generation->finished() || !seq.speculating) continue;  // (finished: it failed choosing)
    kept.push_back({.slot = seq.slot, .from = parts[i].from, .to = seq.cached, .first_row = parts[i].first_row,
                    .tokens = seq.tokens});
  }
  try {
    drafting_.follow(kept, logits_);
  } catch (const std::exception& e) {
    for (Sequence* seq : work.stepping) seq->generation->fail(e.what());
  }
}

void BatchEngine::publish_blocks(const Work& work) {
  for (Sequence* seq : work.stepping) {
    if (seq->generation->finished()) continue;  // it failed choosing, and let go of its slot
    seq->generation->hold_kv(pool_.blocks_of(seq->slot), static_cast<int64_t>(pool_.bytes_of(seq->slot)));
    if (!seq->caching) continue;
    prefix_.extend_chain(seq->tokens, seq->hashes);
    prefix_.publish(seq->slot, seq->tokens, seq->hashes);
    prefix_.keep_captured(seq->slot);
  }
}

// The step's cost by its rows: the forward pass and the choices at its logits rows (a draft row
// costs a choice too: logit_bias and the sampler over the vocabulary).
void BatchEngine::record(const Work& work, std::vector<Part>& parts, StepRecorder::TimePoint started) {
  const auto ended = std::chrono::steady_clock::now();
  const auto rows = static_cast<int64_t>(batch_.size());
  drafting_.policy().record_step(rows, std::chrono::duration<double>(ended - started).count());
  std::vector<RequestTimeline*> timelines;
  std::vector<TimelineEvent> events;
  for (size_t i = 0; i < work.stepping.size(); ++i) {
    timelines.push_back(work.stepping[i]->timeline.get());
    events.push_back(parts[i].event);
  }
  recorder_.record_step(timelines, events, rows, started, ended);
}

void BatchEngine::emit(const Work& work, const std::vector<std::vector<int32_t>>& chosen) {
  for (size_t i = 0; i < work.stepping.size(); ++i) {
    Sequence& seq = *work.stepping[i];
    try {
      for (int32_t token : chosen[i])
        if (!seq.generation->emit(token)) break;
    } catch (const std::exception& e) {
      seq.generation->fail(e.what());
    }
  }
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

void BatchEngine::start(Sequence& seq) {
  seq.slot = free_slots_.back();
  free_slots_.pop_back();
  seq.cached = 0;
  if (seq.caching) {
    // Looked up again: a sequence admitted before it in this step may have taken a block of its
    // earlier hit.
    prefix_.extend_chain(seq.tokens, seq.hashes);
    seq.cached = prefix_.start(seq.slot, seq.tokens, seq.hashes);
  }
  seq.generation->admit(seq.cached);
  const auto now = std::chrono::steady_clock::now();
  seq.timeline->add({.kind = TimelineEvent::Kind::Queued, .start_ms = seq.timeline->ms_since_submit(seq.waiting_since),
                     .end_ms = seq.timeline->ms_since_submit(now), .tokens = seq.cached});
  seq.generation->on_final_event([this, &seq] {
    release(seq);
    seq.timeline->mark(TimelineEvent::Kind::Finished);
  });
  drafting_.policy().admitted();
  if (seq.speculating) drafting_.policy().start(seq.slot);
  if (seq.cached == seq.size()) choose_from_cached_logits(seq);
}

void BatchEngine::choose_from_cached_logits(Sequence& seq) {
  const std::span<const float> logits = prefix_.take_logits(seq.tokens);
  if (logits.empty()) throw std::logic_error("batch engine: a sequence started with no logits to choose from");
  try {
    const int32_t token = seq.generation->choose(logits);
    seq.tokens.push_back(token);
    seq.generation->hold_kv(pool_.blocks_of(seq.slot), static_cast<int64_t>(pool_.bytes_of(seq.slot)));
    seq.generation->emit(token);
  } catch (const std::exception& e) {
    seq.generation->fail(e.what());
  }
}

void BatchEngine::preempt(Sequence& seq) {
  seq.generation->on_final_event(nullptr);
  release(seq);
  seq.slot = -1;
  seq.cached = 0;
  seq.guess.clear();  // a guess for the step it leaves
  ++seq.preemptions;
  seq.waiting_since = std::chrono::steady_clock::now();
  seq.timeline->mark(TimelineEvent::Kind::Preempted, seq.waiting_since);
  recorder_.count_preemption(seq.generation->request().id);
}

void BatchEngine::release(Sequence& seq) {
  drafting_.policy().released(/*others_run=*/slots_held() > 1);
  drafting_.forget(seq.slot);
  prefix_.release(seq.slot, seq.tokens, seq.hashes);
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
  return static_cast<int64_t>(pool_.n_seq()) - static_cast<int64_t>(free_slots_.size());
}

void BatchEngine::publish() { recorder_.set_gauges(slots_held(), pool_.evictions()); }

SequenceState BatchEngine::state_of(const Sequence& seq) const {
  SequenceState state{.id = seq.generation->request().id, .running = seq.slot >= 0,
                      .prompt_tokens = seq.prompt_size(), .tokens = seq.size(), .cached = seq.cached,
                      .preemptions = seq.preemptions, .blocks = {}};
  if (seq.slot >= 0) state.blocks = block_runs(pool_.block_table(seq.slot));
  return state;
}

void BatchEngine::snapshot_if_watched(bool preempted) {
  const bool idle = running_.empty() && waiting_.empty();
  if (!recorder_.snapshot_due(preempted, idle)) return;
  std::vector<SequenceState> states;
  std::vector<int> slots;
  for (const SequencePtr& seq : running_) {
    states.push_back(state_of(*seq));
    slots.push_back(seq->slot);
  }
  for (const SequencePtr& seq : waiting_) states.push_back(state_of(*seq));
  recorder_.snapshot(std::move(states), slots, idle);
}

}  // namespace nanoserve::engine
