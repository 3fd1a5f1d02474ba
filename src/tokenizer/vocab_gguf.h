// Vocab <-> GGUF tokenizer metadata (the tokenizer.ggml.* keys).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gguf/file.h"
#include "gguf/value.h"
#include "tokenizer/vocab.h"

namespace nanoserve::tokenizer {

// Reads tokenizer.ggml.{model, pre, tokens, token_type, merges, bos_token_id, eos_token_id,
// padding_token_id, add_bos_token, add_eos_token}. Throws std::runtime_error naming the key
// for anything missing, malformed or unsupported (model must be "gpt2"; pre: pre_split.h).
// What the keys do not say is derived as llama.cpp does: the Llama 3 pre-split ignores
// merges for whole-token words and adds BOS unless add_bos_token says otherwise. The Qwen2
// pre-split gets the NFC normalization of Qwen's tokenizer.json (llama.cpp skips it), so
// a GGUF and its tokenizer.json give the same ids.
Vocab vocab_from_gguf(const gguf::Metadata& metadata);

// The tokenizer.ggml.* entries as llama.cpp's convert_hf_to_gguf.py writes them: model
// "gpt2", pre, tokens, token_type (int32), merges ("left right"), the bos/eos/padding ids
// that are set (uint32), add_bos_token, and add_eos_token when it is true.
std::vector<std::pair<std::string, gguf::Value>> vocab_to_gguf(const Vocab& vocab);

}  // namespace nanoserve::tokenizer
