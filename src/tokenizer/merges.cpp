#include "tokenizer/merges.h"

#include <stdexcept>
#include <unordered_map>

namespace nanoserve::tokenizer {

MergePieces split_merge_string(std::string_view merge) {
  const size_t space = merge.find(' ');
  if (space == 0 || space == std::string_view::npos || space + 1 == merge.size() ||
      merge.find(' ', space + 1) != std::string_view::npos)
    throw std::runtime_error("bad merge '" + std::string(merge) + "': expected two pieces separated by one space");
  return {std::string(merge.substr(0, space)), std::string(merge.substr(space + 1))};
}

std::vector<std::pair<int32_t, int32_t>> resolve_merges(const std::vector<Token>& tokens,
                                                        const std::vector<MergePieces>& merges) {
  std::unordered_map<std::string_view, int32_t> normal_ids;
  normal_ids.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id)
    if (tokens[id].type == TokenType::kNormal || tokens[id].type == TokenType::kUserDefined)
      normal_ids.emplace(tokens[id].piece, static_cast<int32_t>(id));

  std::vector<std::pair<int32_t, int32_t>> ids;
  ids.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const MergePieces& merge = merges[rank];
    const auto id_of = [&](const std::string& piece) {
      const auto it = normal_ids.find(piece);
      if (it == normal_ids.end())
        throw std::runtime_error("bad merge " + std::to_string(rank) + " '" + merge.left + " " + merge.right +
                                 "': '" + piece + "' is not a token of the vocabulary");
      return it->second;
    };
    ids.emplace_back(id_of(merge.left), id_of(merge.right));
  }
  return ids;
}

}  // namespace nanoserve::tokenizer
