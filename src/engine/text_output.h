// The text of one generation, the same for every engine: each sampled token goes through
// the incremental detokenizer (whole UTF-8 characters only), then the stop-string matcher.
// It also decides when generation ends: an end-of-generation token (unless ignore_eos), a
// stop string, or max_tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/engine.h"
#include "engine/stop_matcher.h"
#include "tokenizer/stream_decoder.h"

namespace nanoserve::engine {

// Whether a token ends generation: the vocabulary's eos, or any control token (an
// <|im_end|> or <|endoftext|> the eos id does not name), as `nanoserve run` does; but not the
// control tokens of gpt-oss's harmony markup (<|channel|>, <|message|>, <|start|>, <|end|>,
// <|constrain|>) in a vocabulary that has them.
bool is_end_of_generation(const tokenizer::Tokenizer& tokenizer, int32_t token);
// Whether a token is one of those harmony markup control tokens, in a vocabulary that speaks
// harmony (has <|channel|>): text of the answer, which grammars may require (grammar_vocabulary.h).
bool is_harmony_markup(const tokenizer::Tokenizer& tokenizer, int32_t token);

class TextOutput {
 public:
  // `tokenizer` must outlive this; the request's stop, max_tokens and ignore_eos are used.
  TextOutput(const tokenizer::Tokenizer& tokenizer, const GenerationRequest& request);

  struct Step {
    std::string text;                    // released by this token (often empty while held back)
    bool token_is_text = true;           // false for an end-of-generation token
    std::optional<FinishReason> finish;  // set when generation ends with this token
    std::string stop;                    // a stop string ended it: that string
  };
  // The next sampled token. Throws std::out_of_range for an id outside the vocabulary.
  Step push(int32_t token);
  // Generation ends for another reason (cancel, context full): the text still held back.
  std::string drain();
  // Every token pushed, the end-of-generation token included.
  int32_t completion_tokens() const { return completion_tokens_; }

 private:
  const tokenizer::Tokenizer& tokenizer_;
  tokenizer::StreamDecoder decoder_;
  StopMatcher stops_;
  int32_t max_tokens_;
  bool ignore_eos_;
  int32_t completion_tokens_ = 0;
};

}  // namespace nanoserve::engine
