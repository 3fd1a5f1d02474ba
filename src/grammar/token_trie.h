// The vocabulary as a trie of token bytes, laid out in preorder: a walk visits a node's
// subtree right after it and skips the subtree in one jump (subtree_end) when the grammar
// rejects the node's bytes. Built once per vocabulary; shared by every request.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nanoserve::grammar {

class TokenTrie {
 public:
  struct Node {
    uint32_t subtree_end = 0;  // index past this node's subtree
    uint32_t tokens_begin = 0, tokens_end = 0;  // tokens whose bytes end here: tokens()[begin, end)
    uint16_t depth = 0;        // bytes from the root (the root: 0)
    uint8_t byte = 0;          // the byte that leads here from the parent
  };

  // token_bytes[id]: the bytes token `id` stands for; tokens with no bytes (control tokens)
  // are left out. Tokens longer than 65535 bytes are left out too.
  explicit TokenTrie(const std::vector<std::string>& token_bytes);

  std::span<const Node> nodes() const { return nodes_; }  // nodes()[0] is the root
  std::span<const int32_t> tokens() const { return tokens_; }
  size_t max_depth() const { return max_depth_; }

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> tokens_;
  size_t max_depth_ = 0;
};

}  // namespace nanoserve::grammar
