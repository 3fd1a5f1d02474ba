#include "engine/prefix_index.h"

#include <algorithm>
#include <stdexcept>

#include "engine/hash.h"

namespace nanoserve::engine {

uint64_t PrefixIndex::chain_hash(uint64_t parent, std::span<const int32_t> block_tokens) {
  uint64_t h = mix64(parent);
  for (int32_t t : block_tokens) h = mix64(h ^ static_cast<uint32_t>(t));
  return h;
}

PrefixIndex::PrefixIndex(int64_t n_blocks, int64_t block_size, HashFn hash)
    : block_size_(block_size),
      hash_(hash),
      entries_(static_cast<size_t>(n_blocks)),
      generation_(static_cast<size_t>(n_blocks), 0) {
  if (n_blocks <= 0 || block_size <= 0) throw std::invalid_argument("prefix index: blocks and block size must be positive");
}

void PrefixIndex::extend_chain(std::span<const int32_t> tokens, std::vector<uint64_t>& hashes) const {
  const auto whole = static_cast<size_t>(static_cast<int64_t>(tokens.size()) / block_size_);
  uint64_t h = hashes.empty() ? kRootHash : hashes.back();
  for (size_t i = hashes.size(); i < whole; ++i) {
    h = hash_(h, tokens.subspan(i * static_cast<size_t>(block_size_), static_cast<size_t>(block_size_)));
    hashes.push_back(h);
  }
}

bool PrefixIndex::parent_matches(const Entry& e, int32_t parent) const {
  return e.parent == parent && (parent < 0 || e.parent_generation == generation_[static_cast<size_t>(parent)]);
}

bool PrefixIndex::holds(const Entry& e, int32_t parent, std::span<const int32_t> block_tokens) const {
  return e.published && parent_matches(e, parent) && std::equal(block_tokens.begin(), block_tokens.end(), e.tokens.begin());
}

std::vector<int32_t> PrefixIndex::match(std::span<const int32_t> tokens, std::span<const uint64_t> hashes) const {
  std::vector<int32_t> blocks;
  const auto whole = std::min(hashes.size(), static_cast<size_t>(static_cast<int64_t>(tokens.size()) / block_size_));
  int32_t parent = -1;
  for (size_t i = 0; i < whole; ++i) {
    const auto found = by_hash_.find(hashes[i]);
    if (found == by_hash_.end()) break;
    const auto own = tokens.subspan(i * static_cast<size_t>(block_size_), static_cast<size_t>(block_size_));
    if (!holds(entries_[static_cast<size_t>(found->second)], parent, own)) break;
    blocks.push_back(found->second);
    parent = found->second;
  }
  return blocks;
}

int32_t PrefixIndex::publish(int32_t block, int32_t parent, uint64_t hash, std::span<const int32_t> block_tokens) {
  if (static_cast<int64_t>(block_tokens.size()) != block_size_)
    throw std::invalid_argument("prefix index: a block is published with exactly block_size tokens");
  if (parent >= 0 && !entries_.at(static_cast<size_t>(parent)).published) return -1;
  if (const auto found = by_hash_.find(hash); found != by_hash_.end())
    return holds(entries_[static_cast<size_t>(found->second)], parent, block_tokens) ? found->second : -1;
  Entry& e = entries_.at(static_cast<size_t>(block));
  if (e.published) return -1;  // a block holds one prefix
  by_hash_.emplace(hash, block);
  e.published = true;
  e.hash = hash;
  e.parent = parent;
  e.parent_generation = parent < 0 ? 0 : generation_[static_cast<size_t>(parent)];
  e.tokens.assign(block_tokens.begin(), block_tokens.end());
  children_[parent].push_back(block);
  return block;
}

int32_t PrefixIndex::publish_tail(int32_t block, int32_t parent, std::span<const int32_t> tail_tokens) {
  if (tail_tokens.empty() || static_cast<int64_t>(tail_tokens.size()) >= block_size_)
    throw std::invalid_argument("prefix index: a tail holds 1 to block_size - 1 tokens");
  if (parent >= 0 && !entries_.at(static_cast<size_t>(parent)).published) return -1;
  if (const auto [child, agree] = longest_child(parent, tail_tokens);
      agree == static_cast<int64_t>(tail_tokens.size()))
    return child;  // the same positions are cached already
  Entry& e = entries_.at(static_cast<size_t>(block));
  if (e.published) return -1;
  e.published = true;
  e.tail = true;
  e.hash = 0;
  e.parent = parent;
  e.parent_generation = parent < 0 ? 0 : generation_[static_cast<size_t>(parent)];
  e.tokens.assign(tail_tokens.begin(), tail_tokens.end());
  children_[parent].push_back(block);
  return block;
}

std::pair<int32_t, int64_t> PrefixIndex::longest_child(int32_t parent, std::span<const int32_t> tokens) const {
  std::pair<int32_t, int64_t> best = {-1, 0};
  const auto found = children_.find(parent);
  if (found == children_.end()) return best;
  for (int32_t child : found->second) {
    const Entry& e = entries_[static_cast<size_t>(child)];
    if (!e.published || !parent_matches(e, parent)) continue;
    const size_t n = std::min({tokens.size(), static_cast<size_t>(block_size_), e.tokens.size()});
    const auto agree = std::mismatch(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(n), e.tokens.begin());
    const auto k = static_cast<int64_t>(agree.first - tokens.begin());
    if (k > best.second) best = {child, k};
  }
  return best;
}

void PrefixIndex::forget(int32_t block) {
  Entry& e = entries_.at(static_cast<size_t>(block));
  ++generation_[static_cast<size_t>(block)];
  children_.erase(block);  // they no longer match (their parent's generation changed)
  if (!e.published) return;
  if (const auto siblings = children_.find(e.parent); siblings != children_.end()) {
    std::erase(siblings->second, block);
    if (siblings->second.empty()) children_.erase(siblings);
  }
  if (!e.tail) by_hash_.erase(e.hash);
  e.published = false;
  e.tail = false;
  e.tokens.clear();
}

}  // namespace nanoserve::engine
