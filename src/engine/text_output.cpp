#include "engine/text_output.h"

namespace nanoserve::engine {

bool is_end_of_generation(const tokenizer::Tokenizer& tokenizer, int32_t token) {
  if (token == tokenizer.eos_id()) return true;
  if (tokenizer.token_type(token) != tokenizer::TokenType::kControl) return false;
  // gpt-oss's harmony writes its messages' structure with control tokens: they are text of
  // the answer (the server reads them, server/harmony_reader.h); <|return|> and <|call|> end it.
  return !is_harmony_markup(tokenizer, token);
}

bool is_harmony_markup(const tokenizer::Tokenizer& tokenizer, int32_t token) {
  if (tokenizer.token_type(token) != tokenizer::TokenType::kControl) return false;
  const std::string_view piece = tokenizer.token_piece(token);
  const bool markup = piece == "<|channel|>" || piece == "<|message|>" || piece == "<|start|>" || piece == "<|end|>" ||
                      piece == "<|constrain|>";
  return markup && tokenizer.find_token("<|channel|>");
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
