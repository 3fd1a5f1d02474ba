#include "tokenizer/space_mark.h"

#include <algorithm>

namespace nanoserve::tokenizer {
namespace {

// Where a '▁' that follows another character starts, from `from` on (npos when none).
size_t next_cut(std::string_view text, size_t from) {
  for (size_t at = text.find(kSpaceMark, std::max<size_t>(from, 1)); at != std::string_view::npos;
       at = text.find(kSpaceMark, at + kSpaceMark.size())) {
    if (at < kSpaceMark.size() || text.substr(at - kSpaceMark.size(), kSpaceMark.size()) != kSpaceMark) return at;
  }
  return std::string_view::npos;
}

}  // namespace

std::string mark_spaces(std::string_view text, bool prefix) {
  std::string out;
  out.reserve(text.size() + text.size() / 4 + kSpaceMark.size());
  if (prefix) out += kSpaceMark;
  for (const char c : text) {
    if (c == ' ') {
      out += kSpaceMark;
    } else {
      out += c;
    }
  }
  return out;
}

std::string unmark_spaces(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kSpaceMark.size()) == kSpaceMark) {
      out += ' ';
      i += kSpaceMark.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

SpaceMarkWords::SpaceMarkWords(const Vocab& vocab) {
  for (const Token& token : vocab.tokens) {
    if (token.type != TokenType::kNormal && token.type != TokenType::kUserDefined) continue;
    if (next_cut(token.piece, 0) != std::string_view::npos) spanning_.push_back(token.piece);
  }
}

void SpaceMarkWords::split(std::string_view marked, std::vector<std::string_view>& words) const {
  // Cuts that a remembered piece covers (a cut strictly inside one of its occurrences) are skipped.
  std::vector<std::pair<size_t, size_t>> covered;
  for (const std::string& piece : spanning_)
    for (size_t at = marked.find(piece); at != std::string_view::npos; at = marked.find(piece, at + 1))
      covered.emplace_back(at, at + piece.size());
  const auto is_covered = [&](size_t cut) {
    return std::any_of(covered.begin(), covered.end(), [&](const auto& r) { return r.first < cut && cut < r.second; });
  };
  size_t start = 0;
  for (size_t cut = next_cut(marked, 0); cut != std::string_view::npos; cut = next_cut(marked, cut + 1)) {
    if (!covered.empty() && is_covered(cut)) continue;
    words.push_back(marked.substr(start, cut - start));
    start = cut;
  }
  if (start < marked.size()) words.push_back(marked.substr(start));
}

}  // namespace nanoserve::tokenizer
