// Vocab from a Hugging Face tokenizer.json (+ tokenizer_config.json).
#pragma once

#include <filesystem>
#include <string_view>

#include "tokenizer/vocab.h"

namespace nanoserve::tokenizer {

// Supported: model BPE (merges as "a b" strings or [a, b] arrays, ignore_merges, no
// byte_fallback / subword prefix / suffix / dropout); normalizer null or NFC; pre_tokenizer
// Sequence[Split(Qwen2 or Llama 3 regex, Isolated), ByteLevel(no prefix space, no regex)];
// decoder ByteLevel; added tokens without lstrip / rstrip / single_word. Anything else
// throws std::runtime_error saying what is not supported. Added tokens are found in the raw
// text, as Hugging Face does for "normalized": false (every added token of Qwen and Llama 3).
//
// Token types follow convert_hf_to_gguf.py: added tokens that are special or look like
// "<|...|>" are kControl, other added tokens kUserDefined, ids missing from the file become
// kUnused "[PAD{id}]". BOS/EOS/padding come from tokenizer_config.json (bos_token, eos_token,
// pad_token) when given, add_bos/add_eos from its add_bos_token/add_eos_token or else from
// a TemplateProcessing post-processor that puts a special token first/last.
// `tokenizer_config_json` may be empty.
Vocab vocab_from_hf_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json = {});

// Reads `tokenizer_json` and, when it exists, tokenizer_config.json in the same folder.
Vocab load_hf_vocab(const std::filesystem::path& tokenizer_json);

}  // namespace nanoserve::tokenizer
