// The reference pre-split: a Hugging Face Split regex (behavior "Isolated") run by PCRE2
// with UTF and UCP. Slower than split_words(); tests check that both agree.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::tokenizer {

// Rewrites the two places where Oniguruma, which Hugging Face uses, and PCRE2 disagree:
// \s / \S become explicit classes of Oniguruma's whitespace (U+0009..U+000D, U+0085, \p{Z};
// PCRE2's \s also takes U+180E), and the (?i:...) contraction group becomes explicit ASCII
// case pairs (PCRE2 would also fold U+017F 'ſ' to 's'; Hugging Face does not).
std::string pcre2_pattern_from_hf(std::string_view hf_regex);

class Pcre2Splitter {
 public:
  // Throws std::runtime_error with PCRE2's message when the pattern does not compile.
  explicit Pcre2Splitter(std::string_view hf_regex);
  ~Pcre2Splitter();
  Pcre2Splitter(Pcre2Splitter&&) noexcept;
  Pcre2Splitter& operator=(Pcre2Splitter&&) noexcept;

  // The matches and the text between them, in order. `text` must be valid UTF-8.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace nanoserve::tokenizer
