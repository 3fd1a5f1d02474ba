#include "tokenizer/stream_decoder.h"

#include "tokenizer/unicode.h"

namespace nanoserve::tokenizer {

std::string StreamDecoder::push(int32_t id) {
  pending_ += tokenizer_->token_piece(id);
  std::string complete;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const Utf8Char c = decode_utf8(pending_, pos);
    if (c.status == Utf8Status::kTruncated) break;
    if (c.status == Utf8Status::kValid)
      complete.append(pending_, pos, c.length);
    else
      complete += kReplacementCharacter;
    pos += c.length;
  }
  pending_.erase(0, pos);
  return complete;
}

std::string StreamDecoder::flush() {
  std::string rest = pending_.empty() ? std::string() : std::string(kReplacementCharacter);
  pending_.clear();
  return rest;
}

}  // namespace nanoserve::tokenizer
