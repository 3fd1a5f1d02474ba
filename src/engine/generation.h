// One request inside an engine: its stream, sampler and text output, and the clock its
// RequestStats come from. Every engine drives its requests through this class, so
// logit_bias, sampling, stop strings, max_tokens, the end of the context and the stats mean
// the same everywhere; an engine only supplies the logits of each step and decides when to
// stop early (cancel, shutdown).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/sampler.h"
#include "engine/text_output.h"
#include "grammar/matcher.h"

namespace nanoserve::engine {

// Throws std::invalid_argument when a request cannot run: an empty prompt, a prompt token or
// logit_bias id outside [0, n_vocab), max_tokens < 1, or a prompt that leaves no room in
// the context for a new token, a grammar without its vocabulary or with ignore_eos.
void validate_request(const GenerationRequest& request, int64_t n_vocab, int64_t context_size);

// Adds each biased token's value to its logit (ids outside `logits` are ignored).
void add_logit_bias(const std::map<int32_t, float>& bias, std::span<float> logits);

class Generation {
 public:
  using Clock = std::chrono::steady_clock;

  // Stamps the submit time. `tokenizer` must outlive this. A token that fills the last of
  // `context_size` positions ends the generation (Length): there is no room to feed it back.
  Generation(GenerationRequest request, const tokenizer::Tokenizer& tokenizer, int64_t context_size);

  const GenerationRequest& request() const { return request_; }
  const std::shared_ptr<Stream>& stream() const { return stream_; }
  bool cancelled() const { return stream_->cancelled(); }
  bool finished() const { return finished_; }
  Clock::time_point submitted() const { return submitted_; }

  // The request holds one of `places` until its final event, which gives it back first, so a
  // reader who has seen the final event can submit again at once.
  void hold_place(std::atomic<int64_t>& places);
  // The request leaves the queue and starts, with `cached_tokens` of its prompt from the prefix
  // cache (stamps the admit time; a request that is preempted and admitted again keeps its
  // first admit time and cached tokens).
  void admit(int64_t cached_tokens = 0);
  // The KV cache blocks the request holds now and their bytes (the stats report the peaks).
  void hold_kv(int64_t blocks, int64_t bytes);
  // Runs on the engine's thread just before the final event is pushed (whichever way the
  // request ends), so an engine gives back what the request held before its reader can look.
  void on_final_event(std::function<void()> release) { release_ = std::move(release); }
  // Picks the next token from this step's logits (logit_bias first, then the grammar's mask,
  // then the sampler) and pushes its text. Returns the token while generation goes on;
  // nullopt once it ended with this token (the Done event is then pushed). The same as
  // emit(choose(logits)).
  std::optional<int32_t> step(std::span<const float> logits);
  // The two halves of step(), for speculative decoding: choose() picks the token that follows
  // the tokens chosen so far (the sampler's history and seeded random stream advance as in
  // step()); emit() pushes a chosen token's text. A verify step chooses at each of its rows
  // while the choice equals the draft token there, then emits what it chose: the tokens, and
  // the random numbers each drew, are those of plain decoding whatever was drafted.
  int32_t choose(std::span<const float> logits);
  std::optional<int32_t> emit(int32_t token);
  // A forward step gave this request new tokens: `drafted` draft tokens were checked, of which
  // `accepted` were right (both 0 for a plain decode step).
  void count_step(int64_t drafted, int64_t accepted);
  // Ends generation early: pushes the text still held back, then Done.
  void finish(FinishReason reason);
  // Ends generation with an Error event.
  void fail(const std::string& error);

 private:
  RequestStats stats() const;
  void end_with(Event final_event);

  GenerationRequest request_;
  std::shared_ptr<Stream> stream_ = std::make_shared<Stream>();
  Sampler sampler_;
  TextOutput output_;
  const int64_t context_size_;
  const tokenizer::Tokenizer& tokenizer_;
  std::optional<grammar::Matcher> grammar_;  // the request's place in its grammar, if it has one
  std::vector<float> biased_;  // this step's logits with logit_bias added and the grammar's mask
  std::deque<TokenLogprobs> chosen_logprobs_;  // of tokens chosen and not yet emitted (logprobs asked)
  Clock::time_point submitted_ = Clock::now(), admitted_, first_token_, last_token_;
  std::atomic<int64_t>* place_ = nullptr;
  std::function<void()> release_;
  int64_t kv_blocks_ = 0, kv_peak_bytes_ = 0, cached_tokens_ = 0;
  int64_t decode_steps_ = 0, verify_steps_ = 0, draft_tokens_ = 0, accepted_tokens_ = 0;
  std::vector<int64_t> drafted_at_, accepted_at_;
  bool finished_ = false;
};

}  // namespace nanoserve::engine
