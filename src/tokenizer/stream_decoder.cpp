#include "tokenizer/stream_decoder.h"

#include "utf8/utf8.h"

namespace nanoserve::tokenizer {

std::string StreamDecoder::push(int32_t id) {
  pending_ += tokenizer_->token_piece(id);
  if (at_start_ && !pending_.empty()) {
    at_start_ = false;
    if (tokenizer_->strips_leading_space() && pending_.front() == ' ') pending_.erase(0, 1);
  }
  std::string complete;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const utf8::Char c = utf8::decode(pending_, pos);
    if (c.status == utf8::Status::kTruncated) break;
    if (c.status == utf8::Status::kValid)
      complete.append(pending_, pos, c.length);
    else
      complete += utf8::kReplacementCharacter;
    pos += c.length;
  }
  pending_.erase(0, pos);
  return complete;
}

std::string StreamDecoder::flush() {
  std::string rest = pending_.empty() ? std::string() : std::string(utf8::kReplacementCharacter);
  pending_.clear();
  return rest;
}

}  // namespace nanoserve::tokenizer
