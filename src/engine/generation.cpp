#include "engine/generation.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "engine/token_logprobs.h"
#include "machine/peak_rss.h"

namespace nanoserve::engine {
namespace {

double milliseconds(Generation::Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

Event text_event(std::string text, std::vector<int32_t> tokens, std::vector<TokenLogprobs> logprobs = {}) {
  Event e;
  e.text = std::move(text);
  e.tokens = std::move(tokens);
  e.logprobs = std::move(logprobs);
  return e;
}

Event done_event(FinishReason reason, const RequestStats& stats, std::string stop = {}) {
  Event e;
  e.kind = Event::Kind::Done;
  e.finish = reason;
  e.stop = std::move(stop);
  e.stats = stats;
  return e;
}

}  // namespace

void validate_request(const GenerationRequest& request, int64_t n_vocab, int64_t context_size) {
  const auto n_prompt = static_cast<int64_t>(request.prompt.size());
  if (n_prompt == 0) throw std::invalid_argument("the prompt is empty");
  if (n_prompt >= context_size)
    throw std::invalid_argument("the prompt (" + std::to_string(n_prompt) + " tokens) does not fit the context (" +
                                std::to_string(context_size) + ")");
  auto check_id = [&](int32_t token, const char* what) {
    if (token < 0 || token >= n_vocab)
      throw std::invalid_argument(std::string(what) + " token " + std::to_string(token) + " is not in the vocabulary");
  };
  for (int32_t token : request.prompt) check_id(token, "prompt");
  for (const auto& [token, bias] : request.logit_bias) check_id(token, "logit_bias");
  if (request.max_tokens < 1) throw std::invalid_argument("max_tokens must be at least 1");
  if (request.grammar && (!request.grammar_vocabulary || request.grammar_vocabulary->end_tokens().empty()))
    throw std::invalid_argument("a grammar needs the vocabulary it masks, with its end tokens");
  if (request.top_logprobs < 0 || request.top_logprobs > kMaxTopLogprobs)
    throw std::invalid_argument("top_logprobs must be from 0 to " + std::to_string(kMaxTopLogprobs));
  if (request.grammar && request.ignore_eos)
    throw std::invalid_argument("ignore_eos cannot be used with a grammar: its end would be ignored");
}

void add_logit_bias(const std::map<int32_t, float>& bias, std::span<float> logits) {
  for (const auto& [token, value] : bias)
    if (token >= 0 && static_cast<size_t>(token) < logits.size()) logits[token] += value;
}

Generation::Generation(GenerationRequest request, const tokenizer::Tokenizer& tokenizer, int64_t context_size)
    : request_(std::move(request)), sampler_(request_.sampling), output_(tokenizer, request_),
      context_size_(context_size), tokenizer_(tokenizer) {
  for (int32_t token : request_.prompt) sampler_.remember(token);  // the penalties see the prompt
  if (request_.grammar) grammar_.emplace(request_.grammar, request_.grammar_vocabulary);
}

void Generation::hold_place(std::atomic<int64_t>& places) {
  ++places;
  place_ = &places;
}

void Generation::admit(int64_t cached_tokens) {
  if (admitted_ != Clock::time_point{}) return;
  admitted_ = Clock::now();
  cached_tokens_ = cached_tokens;
}

void Generation::hold_kv(int64_t blocks, int64_t bytes) {
  kv_blocks_ = std::max(kv_blocks_, blocks);
  kv_peak_bytes_ = std::max(kv_peak_bytes_, bytes);
}

std::optional<int32_t> Generation::step(std::span<const float> logits) {
  count_step(0, 0);
  return emit(choose(logits));
}

int32_t Generation::choose(std::span<const float> logits) {
  std::span<const float> allowed = logits;
  if (!request_.logit_bias.empty() || grammar_) {
    biased_.assign(logits.begin(), logits.end());
    add_logit_bias(request_.logit_bias, biased_);
    // No token allowed: the vocabulary cannot write what the grammar needs next. End rather
    // than write what the grammar forbids.
    if (grammar_ && grammar_->mask(biased_) == 0) {
      if (request_.logprobs) chosen_logprobs_.emplace_back();  // emit() takes one entry per choice
      return request_.grammar_vocabulary->end_tokens().at(0);
    }
    allowed = biased_;
  }
  const int32_t token = sampler_.sample(allowed);
  if (grammar_) grammar_->accept(token);
  if (request_.logprobs)
    chosen_logprobs_.push_back(token_logprobs(allowed, token, request_.top_logprobs, tokenizer_));
  return token;
}

void Generation::count_step(int64_t drafted, int64_t accepted) {
  ++decode_steps_;
  if (drafted == 0) return;
  ++verify_steps_;
  draft_tokens_ += drafted;
  accepted_tokens_ += accepted;
  if (static_cast<int64_t>(drafted_at_.size()) < drafted) {
    drafted_at_.resize(static_cast<size_t>(drafted), 0);
    accepted_at_.resize(static_cast<size_t>(drafted), 0);
  }
  for (int64_t j = 0; j < drafted; ++j) ++drafted_at_[static_cast<size_t>(j)];
  for (int64_t j = 0; j < accepted; ++j) ++accepted_at_[static_cast<size_t>(j)];
}

std::optional<int32_t> Generation::emit(int32_t token) {
  last_token_ = Clock::now();
  if (output_.completion_tokens() == 0) first_token_ = last_token_;

  TextOutput::Step out = output_.push(token);
  std::vector<TokenLogprobs> logprobs;
  if (!chosen_logprobs_.empty()) {  // this token's, when it was chosen by choose() with logprobs asked
    if (out.token_is_text) logprobs.push_back(std::move(chosen_logprobs_.front()));
    chosen_logprobs_.pop_front();
  }
  if (out.token_is_text)
    stream_->push(text_event(std::move(out.text), {token}, std::move(logprobs)));
  else if (!out.text.empty())
    stream_->push(text_event(std::move(out.text), {}));
  if (out.finish) {
    end_with(done_event(*out.finish, stats(), std::move(out.stop)));
    return std::nullopt;
  }
  if (static_cast<int64_t>(request_.prompt.size()) + output_.completion_tokens() > context_size_) {
    finish(FinishReason::Length);
    return std::nullopt;
  }
  return token;
}

void Generation::finish(FinishReason reason) {
  if (finished_) return;
  std::string rest = output_.drain();
  if (!rest.empty()) stream_->push(text_event(std::move(rest), {}));
  end_with(done_event(reason, stats()));
}

void Generation::fail(const std::string& error) {
  if (finished_) return;
  Event e;
  e.kind = Event::Kind::Error;
  e.error = error;
  end_with(std::move(e));
}

void Generation::end_with(Event final_event) {
  finished_ = true;
  if (place_) --*place_;
  if (release_) std::exchange(release_, nullptr)();
  stream_->push(std::move(final_event));
}

RequestStats Generation::stats() const {
  RequestStats s;
  s.prompt_tokens = static_cast<int32_t>(request_.prompt.size());
  s.completion_tokens = output_.completion_tokens();
  s.cached_tokens = static_cast<int32_t>(cached_tokens_);
  const bool was_admitted = admitted_ != Clock::time_point{};
  if (was_admitted) s.queue_ms = milliseconds(admitted_ - submitted_);
  if (s.completion_tokens > 0) {
    s.ttft_ms = milliseconds(first_token_ - submitted_);
    const double prefill_ms = milliseconds(first_token_ - admitted_);
    if (prefill_ms > 0) s.prefill_tok_s = (s.prompt_tokens - s.cached_tokens) / (prefill_ms / 1e3);
    const double decode_ms = milliseconds(last_token_ - first_token_);
    if (s.completion_tokens > 1 && decode_ms > 0)
      s.decode_tok_s = (s.completion_tokens - 1) / (decode_ms / 1e3);
  } else if (!was_admitted) {
    s.queue_ms = milliseconds(Clock::now() - submitted_);  // dropped while waiting
  }
  s.peak_memory_bytes = machine::peak_rss_bytes();
  s.kv_blocks = kv_blocks_;
  s.kv_peak_bytes = kv_peak_bytes_;
  s.decode_steps = decode_steps_;
  s.verify_steps = verify_steps_;
  s.draft_tokens = draft_tokens_;
  s.accepted_tokens = accepted_tokens_;
  s.drafted_at = drafted_at_;
  s.accepted_at = accepted_at_;
  return s;
}

}  // namespace nanoserve::engine
