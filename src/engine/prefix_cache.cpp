#include "engine/prefix_cache.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace nanoserve::engine {

namespace {

std::unique_ptr<KvDiskCache> disk_tier(const model::KvCache& pool, const std::optional<KvDiskOptions>& options) {
  if (!options) return nullptr;
  if (!pool.shares_prefixes())
    throw std::invalid_argument("--cache-dir: this model's sliding-window layers keep only their window, so its "
                                "prefixes are not cached");
  KvDiskOptions o = *options;
  o.block_size = pool.block_size();
  o.block_bytes = pool.block_bytes();
  return std::make_unique<KvDiskCache>(std::move(o));
}

// The kept copies of a hybrid model's recurrent state on disk: files of the state's size, in a
// folder of their own (another fingerprint), with a bound of its own as large as the blocks'.
std::unique_ptr<KvDiskCache> state_tier(const model::KvCache& pool, const std::optional<KvDiskOptions>& options) {
  const model::RecurrentStates* states = pool.recurrent_states();
  if (!options || !states) return nullptr;
  KvDiskOptions o = *options;
  o.fingerprint ^= 0x7374617465730000;  // "states"
  o.block_size = pool.block_size();
  o.block_bytes = states->bytes_per_sequence();
  o.max_queued_bytes = std::max(o.max_queued_bytes, 4 * o.block_bytes);
  return std::make_unique<KvDiskCache>(std::move(o));
}

}  // namespace

PrefixCache::PrefixCache(model::KvCache& pool, PrefixCacheOptions options)
    : pool_(pool),
      enabled_(options.enabled && pool.shares_prefixes()),
      block_states_(options.block_states || pool.recurrent_states() != nullptr),
      index_(pool.n_blocks(), pool.block_size(), options.hash),
      slots_(static_cast<size_t>(pool.n_seq())),
      last_logits_(std::max<size_t>(1, options.last_logits)),
      disk_(disk_tier(pool, options.disk)),
      state_disk_(state_tier(pool, options.disk)),
      block_buffer_(disk_ ? pool.block_bytes() : 0),
      max_state_bytes_(options.max_state_bytes) {
  pool_.on_evict([this](int32_t block) { forget(block); });
}

PrefixCache::Hit PrefixCache::find(std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                                   int64_t limit) const {
  Hit hit;
  if (!enabled_) return hit;
  model::KvCache::Attachment& a = hit.attachment;
  const int64_t block = pool_.block_size();
  a.blocks = index_.match(tokens, hashes);
  const auto matched = static_cast<int64_t>(a.blocks.size()) * block;
  limit = std::max<int64_t>(0, std::min(limit, static_cast<int64_t>(tokens.size())));
  if (limit < matched) {  // the limit ends inside the matched blocks: the last one is copied
    const auto whole = static_cast<size_t>(limit / block);
    if (limit % block != 0) a.copied = a.blocks[whole];
    a.blocks.resize(whole);
    a.positions = limit;
  } else {
    a.positions = matched;
    // The tokens past the whole blocks may begin a cached block that followed the last one
    // (the previous turn's answer, the same prompt sent before): its first positions are copied.
    if (matched < limit) {
      const int32_t parent = a.blocks.empty() ? -1 : a.blocks.back();
      const auto [child, agree] = index_.longest_child(parent, tokens.subspan(static_cast<size_t>(matched)));
      const int64_t used = std::min(agree, limit - matched);
      if (used > 0) {
        a.copied = child;
        a.positions += used;
      }
    }
  }
  if (block_states_) end_at_state(hit);
  hit.pool_cost = pool_.attach_cost(a);
  return hit;
}

void PrefixCache::end_at_state(Hit& hit) const {
  model::KvCache::Attachment& a = hit.attachment;
  a.copied = -1;
  while (!a.blocks.empty() && !states_.contains(a.blocks.back())) a.blocks.pop_back();
  a.positions = static_cast<int64_t>(a.blocks.size()) * pool_.block_size();
}

PrefixCache::Hit PrefixCache::find_start(std::span<const int32_t> tokens, std::span<const uint64_t> hashes) const {
  const auto n = static_cast<int64_t>(tokens.size());
  return find(tokens, hashes, last_logits_.contains(tokens) ? n : n - 1);
}

int64_t PrefixCache::start(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes) {
  const Hit hit = find_start(tokens, hashes);
  int64_t cached = 0;
  if (hit.pool_cost <= pool_.free_blocks()) {
    attach(slot, hit);
    cached = hit.attachment.positions;
  }
  ++lookups_;
  hit_tokens_ += static_cast<uint64_t>(cached);
  miss_tokens_ += static_cast<uint64_t>(static_cast<int64_t>(tokens.size()) - cached);
  return cached;
}

void PrefixCache::attach(int slot, const Hit& hit) {
  pool_.attach(slot, hit.attachment);
  const std::vector<int32_t>& blocks = hit.attachment.blocks;
  model::RecurrentStates* states = pool_.recurrent_states();
  if (states && !blocks.empty()) {
    auto found = states_.find(blocks.back());
    if (found == states_.end()) throw std::logic_error("prefix cache: a recurrent prefix without its state");
    states->restore(slot, found->second.state);
    states_by_use_.splice(states_by_use_.end(), states_by_use_, found->second.recent);
  }
  slots_.at(static_cast<size_t>(slot)) =
      Slot{.published = static_cast<int64_t>(blocks.size()), .chain = blocks.empty() ? -1 : blocks.back()};
}

void PrefixCache::publish(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes) {
  if (!enabled_) return;
  Slot& s = slots_.at(static_cast<size_t>(slot));
  const std::span<const int32_t> table = pool_.block_table(slot);
  const int64_t block = pool_.block_size();
  s.computed = std::min(pool_.length(slot), static_cast<int64_t>(tokens.size()));
  const int64_t whole = s.computed / block;
  for (int64_t i = s.published; s.publishing && i < whole && i < static_cast<int64_t>(hashes.size()); ++i) {
    const auto own = table[static_cast<size_t>(i)];
    const int32_t stands = index_.publish(own, s.chain, hashes[static_cast<size_t>(i)],
                                          tokens.subspan(static_cast<size_t>(i * block), static_cast<size_t>(block)));
    if (stands < 0) {
      s.publishing = false;
    } else {
      if (stands == own) pool_.keep(own);
      s.chain = stands;
      s.published = i + 1;
    }
  }
}

void PrefixCache::release(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes) {
  if (disk_ && enabled_) spill(slot, tokens, hashes);
  if (enabled_ && !block_states_) keep_tail(slot, tokens);
  pool_.clear(slot);
  slots_.at(static_cast<size_t>(slot)) = Slot{};
}

// The positions a released sequence computed past its last whole block stay in the pool as a
// tail, so that the same prompt sent again (or a follow-up that starts with its answer) finds
// every position: an exact resend then takes no step at all. Not for states besides KV, which
// cannot be cut inside a block.
void PrefixCache::keep_tail(int slot, std::span<const int32_t> tokens) {
  const Slot& s = slots_.at(static_cast<size_t>(slot));
  const int64_t block = pool_.block_size(), whole = s.computed / block, rest = s.computed % block;
  const std::span<const int32_t> table = pool_.block_table(slot);
  if (!s.publishing || s.published != whole || rest == 0 || whole >= static_cast<int64_t>(table.size()) ||
      static_cast<int64_t>(tokens.size()) < s.computed)
    return;
  const int32_t own = table[static_cast<size_t>(whole)];
  const std::span<const int32_t> tail = tokens.subspan(static_cast<size_t>(whole * block), static_cast<size_t>(rest));
  if (index_.publish_tail(own, whole == 0 ? -1 : s.chain, tail) == own) pool_.keep(own);
}

void PrefixCache::spill(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes) {
  const int64_t block = pool_.block_size();
  const std::span<const int32_t> table = pool_.block_table(slot);
  for (int64_t i = 0; i < slots_.at(static_cast<size_t>(slot)).published; ++i) {
    const uint64_t hash = hashes[static_cast<size_t>(i)];
    if (disk_->contains(hash)) continue;
    pool_.read_block(table[static_cast<size_t>(i)], block_buffer_);
    if (!disk_->store(hash, tokens.first(static_cast<size_t>((i + 1) * block)), block_buffer_)) break;
  }
  if (!state_disk_) return;
  for (int64_t i = 0; i < slots_.at(static_cast<size_t>(slot)).published; ++i) {
    const std::span<const float> state = state_after(table[static_cast<size_t>(i)]);
    const uint64_t hash = hashes[static_cast<size_t>(i)];
    if (state.empty() || state_disk_->contains(hash)) continue;
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(state.data()), state.size_bytes());
    state_disk_->store(hash, tokens.first(static_cast<size_t>((i + 1) * block)), bytes);
  }
}

void PrefixCache::prefetch(std::span<const int32_t> tokens, std::span<const uint64_t> hashes, int64_t room) {
  if (!disk_ || !enabled_) return;
  const auto block = static_cast<size_t>(pool_.block_size());
  std::vector<int32_t> chain = index_.match(tokens, hashes);
  int32_t parent = chain.empty() ? -1 : chain.back();
  for (size_t i = chain.size(), read = 0; i < hashes.size() && static_cast<int64_t>(read) < room; ++i, ++read) {
    if (!disk_->contains(hashes[i])) break;
    const std::span<const int32_t> prefix = tokens.first((i + 1) * block);
    if (!disk_->load(hashes[i], prefix, block_buffer_)) break;
    const int32_t filled = pool_.fill_idle_block(block_buffer_, parent);
    if (filled < 0) break;
    if (index_.publish(filled, parent, hashes[i], prefix.last(block)) != filled) {
      pool_.discard(filled);
      break;
    }
    parent = filled;
    chain.push_back(filled);
  }
  if (state_disk_) prefetch_state(tokens, hashes, chain);
}

// The state at the deepest block of `chain` (the pooled prefix of tokens) that has none in memory
// but one on disk, when no deeper block has one in memory.
void PrefixCache::prefetch_state(std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                                 std::span<const int32_t> chain) {
  const auto block = static_cast<size_t>(pool_.block_size());
  for (size_t i = chain.size(); i-- > 0;) {
    if (states_.contains(chain[i])) return;
    if (!state_disk_->contains(hashes[i])) continue;
    std::vector<float> state(pool_.recurrent_states()->bytes_per_sequence() / sizeof(float));
    const std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(state.data()), state.size() * sizeof(float));
    if (!state_disk_->load(hashes[i], tokens.first((i + 1) * block), bytes)) continue;
    keep_state_of(chain[i], std::move(state));
    return;
  }
}

void PrefixCache::keep_logits(std::span<const int32_t> tokens, std::span<const float> logits) {
  if (enabled_) last_logits_.put(tokens, logits);
}

std::span<const float> PrefixCache::take_logits(std::span<const int32_t> tokens) {
  const std::span<const float> logits = last_logits_.find(tokens);
  if (!logits.empty()) ++logits_hits_;
  return logits;
}

void PrefixCache::keep_state(int slot, int64_t index, std::vector<float> state) {
  if (!enabled_ || !block_states_) return;
  if (index < 0 || index >= slots_.at(static_cast<size_t>(slot)).published)
    throw std::out_of_range("prefix cache: a state is kept after a published block only");
  const int32_t block = pool_.block_table(slot)[static_cast<size_t>(index)];
  if (pool_.kept(block)) keep_state_of(block, std::move(state));  // a duplicate block's prefix has its own
}

void PrefixCache::keep_state_of(int32_t block, std::vector<float> state) {
  drop_state(block);
  state_bytes_ += static_cast<int64_t>(state.size() * sizeof(float));
  states_by_use_.push_back(block);
  states_[block] = KeptState{.state = std::move(state), .recent = std::prev(states_by_use_.end())};
  while (state_bytes_ > max_state_bytes_ && states_by_use_.size() > 1) drop_state(states_by_use_.front());
}

std::span<const float> PrefixCache::state_after(int32_t block) const {
  const auto found = states_.find(block);
  return found == states_.end() ? std::span<const float>{} : std::span<const float>(found->second.state);
}

void PrefixCache::plan_capture(int slot, int64_t cached, int64_t end, int64_t hint) {
  model::RecurrentStates* states = pool_.recurrent_states();
  if (!enabled_ || !states) return;
  const int64_t block = pool_.block_size();
  int64_t boundary = end / block * block;
  if (hint > cached && hint <= end && hint % block == 0) boundary = hint;
  states->capture(slot, boundary > cached ? boundary : -1);
}

void PrefixCache::keep_captured(int slot) {
  const model::RecurrentStates* states = pool_.recurrent_states();
  if (!enabled_ || !states) return;
  Slot& s = slots_.at(static_cast<size_t>(slot));
  const int64_t at = states->captured_position(slot);
  const int64_t index = at / pool_.block_size() - 1;
  // (a copy inside a block is speculative decoding's, engine/batch_engine.h)
  if (at <= s.state_kept_at || at % pool_.block_size() != 0 || index < 0 || index >= s.published) return;
  keep_state(slot, index, states->captured(slot));
  s.state_kept_at = at;
}

void PrefixCache::drop_state(int32_t block) {
  const auto found = states_.find(block);
  if (found == states_.end()) return;
  state_bytes_ -= static_cast<int64_t>(found->second.state.size() * sizeof(float));
  states_by_use_.erase(found->second.recent);
  states_.erase(found);
}

void PrefixCache::forget(int32_t block) {
  index_.forget(block);
  drop_state(block);
}

PrefixCacheStats PrefixCache::stats() const {
  return {.lookups = lookups_, .hit_tokens = hit_tokens_, .miss_tokens = miss_tokens_, .logits_hits = logits_hits_};
}

}  // namespace nanoserve::engine
