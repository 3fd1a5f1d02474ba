#include "tokenizer/pcre2_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

namespace nanoserve::tokenizer {
namespace {

constexpr std::string_view kCaseInsensitiveContractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
constexpr std::string_view kAsciiCaseContractions = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
constexpr std::string_view kWhitespaceClassBody = R"(\t-\r\x{85}\p{Z})";

}  // namespace

std::string pcre2_pattern_from_hf(std::string_view hf_regex) {
  std::string pattern;
  bool in_class = false;
  for (size_t i = 0; i < hf_regex.size(); ++i) {
    if (hf_regex.substr(i).starts_with(kCaseInsensitiveContractions)) {
      pattern += kAsciiCaseContractions;
      i += kCaseInsensitiveContractions.size() - 1;
      continue;
    }
    const char c = hf_regex[i];
    if (c == '\\' && i + 1 < hf_regex.size()) {
      const char escaped = hf_regex[++i];
      if (escaped == 's') {
        pattern += in_class ? std::string(kWhitespaceClassBody) : "[" + std::string(kWhitespaceClassBody) + "]";
      } else if (escaped == 'S' && !in_class) {
        pattern += "[^" + std::string(kWhitespaceClassBody) + "]";
      } else if (escaped == 'S') {
        throw std::runtime_error("\\S inside a character class is not supported: " + std::string(hf_regex));
      } else {
        pattern += c;
        pattern += escaped;
      }
      continue;
    }
    if (c == '[' && !in_class) in_class = true;
    else if (c == ']' && in_class) in_class = false;
    pattern += c;
  }
  return pattern;
}

struct Pcre2Splitter::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

Pcre2Splitter::Pcre2Splitter(std::string_view hf_regex) : compiled_(std::make_unique<Compiled>()) {
  const std::string pattern = pcre2_pattern_from_hf(hf_regex);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (compiled_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::runtime_error("PCRE2 cannot compile '" + pattern + "' at offset " + std::to_string(error_offset) +
                             ": " + reinterpret_cast<const char*>(message));
  }
}

Pcre2Splitter::~Pcre2Splitter() = default;
Pcre2Splitter::Pcre2Splitter(Pcre2Splitter&&) noexcept = default;
Pcre2Splitter& Pcre2Splitter::operator=(Pcre2Splitter&&) noexcept = default;

std::vector<std::string_view> Pcre2Splitter::split(std::string_view text) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), pos, 0,
                               match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error("PCRE2 match failed with code " + std::to_string(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t match_start = ovector[0], match_end = ovector[1];
    // None of the supported patterns can match the empty string; a loop would not advance.
    if (match_end == match_start)
      throw std::runtime_error("the pre-split regex matched the empty string at byte " + std::to_string(match_start));
    if (match_start > pos) pieces.push_back(text.substr(pos, match_start - pos));
    pieces.push_back(text.substr(match_start, match_end - match_start));
    pos = match_end;
  }
  if (pos < text.size()) pieces.push_back(text.substr(pos));
  return pieces;
}

}  // namespace nanoserve::tokenizer
