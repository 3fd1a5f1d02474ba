// Unicode Normalization Form C (canonical decomposition, then canonical composition), as
// the "NFC" normalizer of a Hugging Face tokenizer.json applies it.
#pragma once

#include <string>
#include <string_view>

namespace nanoserve::tokenizer {

// False when `text` is certainly NFC already (no code point that NFC could change or
// combine); cheap, so callers skip nfc_normalize() for most text.
bool may_need_nfc(std::string_view text);

// The NFC form of `text`. Bytes that are not UTF-8 are kept as they are and block
// composition across them.
std::string nfc_normalize(std::string_view text);

}  // namespace nanoserve::tokenizer
