// The tokenizer part of a synthesized model's metadata.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/value.h"

namespace nanoserve::synth {

// tokenizer.* metadata with exactly `n_vocab` rows: from a Hugging Face tokenizer.json
// (and the chat template of the tokenizer_config.json beside it), or, when the path is
// empty, a built-in byte-level vocabulary (256 byte tokens and the ChatML special tokens,
// no merges, a ChatML template). Missing rows are UNUSED "[PAD{id}]" tokens, as in real
// Qwen files. A non-empty `chat_template_override` is embedded instead of the tokenizer's. Throws when
// the tokenizer has more tokens than `n_vocab`.
std::vector<std::pair<std::string, gguf::Value>> synth_vocab_metadata(const std::string& tokenizer_json,
                                                                      uint32_t n_vocab,
                                                                      const std::string& chat_template_override = {});

}  // namespace nanoserve::synth
