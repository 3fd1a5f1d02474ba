#include "engine/text_output.h"

namespace nanoserve::engine {

bool is_end_of_generation(const tokenizer::Tokenizer& tokenizer, int32_t token) {
  return token == tokenizer.eos_id() || tokenizer.token_type(token) == tokenizer::TokenType::kControl;
}

TextOutput::TextOutput(const tokenizer::Tokenizer& tokenizer, const GenerationRequest& request)
    : tokenizer_(tokenizer),
      decoder_(tokenizer),
      stops_(request.stop),
      max_tokens_(request.max_tokens),
      ignore_eos_(request.ignore_eos) {}

TextOutput::Step TextOutput::push(int32_t token) {
  ++completion_tokens_;
  if (!ignore_eos_ && is_end_of_generation(tokenizer_, token)) return {drain(), false, FinishReason::Stop, {}};
  StopMatcher::Result out = stops_.push(decoder_.push(token));
  if (out.stopped) return {std::move(out.text), true, FinishReason::Stop, std::move(out.stop)};
  if (completion_tokens_ >= max_tokens_) return {out.text + drain(), true, FinishReason::Length, {}};
  return {std::move(out.text), true, std::nullopt, {}};
}

std::string TextOutput::drain() {
  // The decoder's unfinished character (as U+FFFD) still goes through the stop matcher.
  std::string text = stops_.push(decoder_.flush()).text;
  return text + stops_.release();
}

}  // namespace nanoserve::engine
