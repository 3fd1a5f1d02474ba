// The o200k pre-split (gpt-oss's o200k_harmony, GPT-4o's o200k_base, Phi-4-mini), by hand:
// the length of the match of its regex at a position, as Hugging Face's Split (Oniguruma)
// finds it. Its words tell upper from lower case, so that "HelloWorld" is two words:
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//  |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//  |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
#pragma once

#include <cstddef>
#include <string_view>

namespace nanoserve::tokenizer {

inline constexpr std::string_view kO200kRegex =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// The length of the match at `start` (< text.size()); never 0. Bytes that are not UTF-8 count
// as one punctuation-like character each.
size_t o200k_match_length(std::string_view text, size_t start);

}  // namespace nanoserve::tokenizer
