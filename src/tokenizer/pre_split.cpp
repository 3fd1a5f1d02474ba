#include "tokenizer/pre_split.h"

#include <stdexcept>
#include <string>

#include "tokenizer/o200k_split.h"
#include "tokenizer/unicode.h"
#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

constexpr std::string_view kQwen2Regex =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kLlama3Regex =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

constexpr std::string_view kGpt2Regex = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

struct CharAt {
  char32_t code_point;  // U+FFFD for a byte that is not UTF-8
  uint32_t length;
  CharClass char_class;
};

CharAt char_at(std::string_view text, size_t pos) {
  const auto byte = static_cast<uint8_t>(text[pos]);
  if (byte < 0x80) return {byte, 1, char_class(byte)};
  const utf8::Char c = utf8::decode(text, pos);
  return {c.code_point, c.length, c.status == utf8::Status::kValid ? char_class(c.code_point) : CharClass::kOther};
}

bool is_newline(char32_t cp) { return cp == '\r' || cp == '\n'; }

size_t end_of_class_run(std::string_view text, size_t pos, CharClass cls) {
  while (pos < text.size()) {
    const CharAt c = char_at(text, pos);
    if (c.char_class != cls) break;
    pos += c.length;
  }
  return pos;
}

// Length of what follows an apostrophe in (?i:'s|'t|'re|'ve|'m|'ll|'d), or 0. Hugging Face
// folds only ASCII case here: "'ſ" (long s) is not a contraction (golden line "'ſ long s").
size_t contraction_suffix_length(std::string_view text, size_t pos) {
  const auto lower_at = [&](size_t i) { return i < text.size() ? static_cast<char>(text[i] | 0x20) : '\0'; };
  switch (lower_at(pos)) {
    case 's': case 't': case 'm': case 'd':
      return 1;
    case 'r': case 'v':
      return lower_at(pos + 1) == 'e' ? 2 : 0;
    case 'l':
      return lower_at(pos + 1) == 'l' ? 2 : 0;
    default:
      return 0;
  }
}

// Only whitespace is left at `start`: \s+(?!\S) | \s+ takes the whole run at the end of the
// text; before a non-space it gives the last whitespace character back (which then starts
// the next word), unless that would leave nothing, when \s+ takes the single character.
size_t whitespace_run_length(std::string_view text, size_t start) {
  size_t run_end = start;
  size_t last_char_start = start;
  while (run_end < text.size()) {
    const CharAt c = char_at(text, run_end);
    if (c.char_class != CharClass::kWhitespace) break;
    last_char_start = run_end;
    run_end += c.length;
  }
  if (run_end == text.size() || last_char_start == start) return run_end - start;
  return last_char_start - start;
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t gpt2_match_length(std::string_view text, size_t start) {
  const CharAt first = char_at(text, start);
  size_t next = start + first.length;
  if (first.code_point == '\'' && next < text.size()) {
    const std::string_view rest = text.substr(next, 2);
    for (std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"})
      if (rest.starts_with(suffix)) return 1 + suffix.size();
  }
  CharAt word = first;
  size_t word_start = start;
  if (first.code_point == ' ' && next < text.size()) {
    const CharAt second = char_at(text, next);
    if (second.char_class != CharClass::kWhitespace) word = second, word_start = next;
  }
  if (word.char_class == CharClass::kWhitespace) return whitespace_run_length(text, start);
  return end_of_class_run(text, word_start, word.char_class) - start;
}

// Length of the regex match starting at `start`. Every character starts some alternative,
// so matches are contiguous and the pre-split never leaves a gap.
size_t match_length(PreSplit kind, std::string_view text, size_t start) {
  if (kind == PreSplit::kGpt2) return gpt2_match_length(text, start);
  if (kind == PreSplit::kO200k) return o200k_match_length(text, start);
  const size_t size = text.size();
  const CharAt first = char_at(text, start);
  const size_t next = start + first.length;

  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (first.code_point == '\'') {
    if (const size_t suffix = contraction_suffix_length(text, next)) return 1 + suffix;
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (first.char_class == CharClass::kLetter) return end_of_class_run(text, next, CharClass::kLetter) - start;
  if (first.char_class != CharClass::kNumber && !is_newline(first.code_point) && next < size &&
      char_at(text, next).char_class == CharClass::kLetter)
    return end_of_class_run(text, next, CharClass::kLetter) - start;
  // \p{N} (Qwen2) or \p{N}{1,3} (Llama 3)
  if (first.char_class == CharClass::kNumber) {
    const int max_digits = kind == PreSplit::kLlama3 ? 3 : 1;
    size_t end = next;
    for (int digits = 1; digits < max_digits && end < size; ++digits) {
      const CharAt c = char_at(text, end);
      if (c.char_class != CharClass::kNumber) break;
      end += c.length;
    }
    return end - start;
  }
  // " ?[^\s\p{L}\p{N}]+[\r\n]*"
  size_t symbols_start = std::string_view::npos;
  if (first.char_class == CharClass::kOther)
    symbols_start = start;
  else if (first.code_point == ' ' && next < size && char_at(text, next).char_class == CharClass::kOther)
    symbols_start = next;
  if (symbols_start != std::string_view::npos) {
    size_t end = end_of_class_run(text, symbols_start, CharClass::kOther);
    while (end < size && is_newline(static_cast<uint8_t>(text[end]))) ++end;
    return end - start;
  }

  // Only whitespace is left: \s*[\r\n]+ backtracks to the last newline of the run; without
  // a newline, \s+(?!\S) | \s+.
  size_t after_last_newline = std::string_view::npos;
  for (size_t pos = start; pos < size;) {
    const CharAt c = char_at(text, pos);
    if (c.char_class != CharClass::kWhitespace) break;
    pos += c.length;
    if (is_newline(c.code_point)) after_last_newline = pos;
  }
  if (after_last_newline != std::string_view::npos) return after_last_newline - start;
  return whitespace_run_length(text, start);
}

}  // namespace

std::string_view hf_regex(PreSplit kind) {
  switch (kind) {
    case PreSplit::kLlama3: return kLlama3Regex;
    case PreSplit::kGpt2: return kGpt2Regex;
    case PreSplit::kO200k: return kO200kRegex;
    default: return kQwen2Regex;
  }
}

PreSplit pre_split_from_hf_regex(std::string_view regex) {
  if (regex == kQwen2Regex) return PreSplit::kQwen2;
  if (regex == kLlama3Regex) return PreSplit::kLlama3;
  if (regex == kGpt2Regex) return PreSplit::kGpt2;
  if (regex == kO200kRegex) return PreSplit::kO200k;
  throw std::runtime_error("unsupported pre-tokenizer regex '" + std::string(regex) +
                           "': supported are the Qwen2 pattern '" + std::string(kQwen2Regex) +
                           "', the Llama 3 pattern '" + std::string(kLlama3Regex) + "', GPT-2's '" +
                           std::string(kGpt2Regex) + "' and o200k's '" + std::string(kO200kRegex) + "'");
}

PreSplit pre_split_from_gguf_name(std::string_view name) {
  if (name == "qwen2" || name == "deepseek-r1-qwen") return PreSplit::kQwen2;
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return PreSplit::kLlama3;
  // "gpt-2" is what llama.cpp's converter writes for GPT-2 itself (and "phi-2" for Phi-2's copy of it).
  if (name == "default" || name == "gpt2" || name == "gpt-2" || name == "phi-2") return PreSplit::kGpt2;
  if (name == "gpt-4o" || name == "llama4") return PreSplit::kO200k;
  throw std::runtime_error("unsupported tokenizer.ggml.pre '" + std::string(name) +
                           "': supported are qwen2, deepseek-r1-qwen (Qwen2 regex), llama-bpe, llama3, "
                           "llama-v3 (Llama 3 regex), default, gpt2, gpt-2, phi-2 (GPT-2 regex) and gpt-4o, "
                           "llama4 (o200k regex)");
}

std::string_view gguf_pre_name(PreSplit kind) {
  switch (kind) {
    case PreSplit::kLlama3: return "llama-bpe";
    case PreSplit::kGpt2: return "default";
    case PreSplit::kO200k: return "gpt-4o";
    default: return "qwen2";
  }
}

void split_words(PreSplit kind, std::string_view text, std::vector<std::string_view>& words) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = match_length(kind, text, pos);
    words.push_back(text.substr(pos, length));
    pos += length;
  }
}

}  // namespace nanoserve::tokenizer
