// The pre-split: cutting text into the words that BPE then encodes one by one. Each kind
// is a hand-written matcher that gives exactly the matches of the regex Hugging Face runs
// (tokenizers' Split pre-tokenizer, behavior "Isolated", regex engine Oniguruma);
// Pcre2Splitter (pcre2_splitter.h) runs the regex itself and is the reference in tests.
#pragma once

#include <string_view>
#include <vector>

namespace nanoserve::tokenizer {

enum class PreSplit {
  kQwen2,   // Qwen2 / Qwen2.5 / Qwen3: digits one by one
  kLlama3,  // Llama 3: digits in groups of up to three
  kGpt2,    // GPT-2's original regex (llama.cpp's "default"): case-sensitive contractions,
            // runs of digits, a space joins the word after it
  kO200k,   // gpt-oss, GPT-4o, Phi-4-mini, Llama 4 (o200k_split.h): words split at case changes
};

// The Split regex as tokenizer.json writes it (after JSON unescaping).
std::string_view hf_regex(PreSplit kind);
// Throws std::runtime_error naming the supported patterns when `regex` is not one of them.
PreSplit pre_split_from_hf_regex(std::string_view regex);

// tokenizer.ggml.pre: "qwen2" and "deepseek-r1-qwen" are kQwen2; "llama-bpe", "llama3"
// and "llama-v3" are kLlama3 (llama.cpp's names for these regexes); "default" and "gpt2"
// are kGpt2; "gpt-4o" (gpt-oss, Phi-4-mini) and "llama4" are kO200k. Other names throw.
PreSplit pre_split_from_gguf_name(std::string_view name);
// The name convert_hf_to_gguf.py writes: "qwen2", "llama-bpe", "default" or "gpt-4o".
std::string_view gguf_pre_name(PreSplit kind);

// Appends the words of `text` to `words` (views into `text`, which they cover in order).
// Bytes that are not UTF-8 count as one punctuation-like character each.
void split_words(PreSplit kind, std::string_view text, std::vector<std::string_view>& words);

}  // namespace nanoserve::tokenizer
