#include "grammar/token_trie.h"

#include <algorithm>
#include <limits>
#include <string_view>

namespace nanoserve::grammar {

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes) {
  std::vector<int32_t> ids;
  for (size_t id = 0; id < token_bytes.size(); ++id) {
    const size_t n = token_bytes[id].size();
    if (n > 0 && n <= std::numeric_limits<uint16_t>::max()) ids.push_back(static_cast<int32_t>(id));
  }
  // Sorted by bytes, a prefix comes before the tokens it starts: nodes are created in preorder.
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return token_bytes[a] < token_bytes[b]; });

  nodes_.push_back(Node{});
  std::vector<uint32_t> path{0};  // path[d]: the node at depth d on the way to the last token
  std::string_view previous;
  for (int32_t id : ids) {
    const std::string_view bytes = token_bytes[id];
    size_t common = 0;
    while (common < previous.size() && common < bytes.size() && previous[common] == bytes[common]) ++common;
    while (path.size() > common + 1) {  // leave the nodes the new token does not pass through
      nodes_[path.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t d = common; d < bytes.size(); ++d) {
      Node n;
      n.depth = static_cast<uint16_t>(d + 1);
      n.byte = static_cast<uint8_t>(bytes[d]);
      n.tokens_begin = n.tokens_end = static_cast<uint32_t>(tokens_.size());
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(n);
    }
    tokens_.push_back(id);
    nodes_[path.back()].tokens_end = static_cast<uint32_t>(tokens_.size());
    max_depth_ = std::max(max_depth_, bytes.size());
    previous = bytes;
  }
  for (uint32_t node : path) nodes_[node].subtree_end = static_cast<uint32_t>(nodes_.size());
}

}  // namespace nanoserve::grammar
