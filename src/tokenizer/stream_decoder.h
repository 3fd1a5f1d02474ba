// Incremental detokenization for streaming: one token at a time in, valid UTF-8 out. A
// token can end inside a multi-byte character (an emoji is often two or three tokens), so
// the bytes of an unfinished character wait for the next token. The text is decode()'s for
// the tokens pushed so far: without its first space where the tokenizer strips it.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/tokenizer.h"

namespace nanoserve::tokenizer {

class StreamDecoder {
 public:
  // `tokenizer` must outlive the decoder.
  explicit StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}

  // The text completed by this token: whole characters only; bytes that can never become
  // a character come out as U+FFFD at once. Throws std::out_of_range on a bad id.
  std::string push(int32_t id);
  // At the end of the stream: what is still held back, as U+FFFD (an unfinished character).
  std::string flush();

 private:
  const Tokenizer* tokenizer_;
  std::string pending_;  // the start of an unfinished character
  bool at_start_ = true;  // no byte has come yet
};

}  // namespace nanoserve::tokenizer
