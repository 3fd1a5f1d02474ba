#include "engine/kv_disk_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "gguf/file.h"
#include "model/config.h"
#include "engine/hash.h"

namespace nanoserve::engine {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[4] = {'N', 'S', 'K', 'V'};
constexpr uint32_t kVersion = 1;
constexpr const char* kSuffix = ".kvb";

struct Header {
  char magic[4];
  uint32_t version;
  uint64_t fingerprint;
  uint64_t hash;
  uint64_t block_size;
  uint64_t n_tokens;    // the prefix's tokens, then the block's data
  uint64_t data_bytes;
};

// A 64-bit digest of bytes: four independent lanes over 32-byte strides (a model's gigabytes
// go at memory speed), folded together with the length.
uint64_t digest(std::span<const uint8_t> bytes, uint64_t seed) {
  uint64_t lane[4] = {mix64(seed), mix64(seed + 1), mix64(seed + 2), mix64(seed + 3)};
  size_t i = 0;
  for (; i + 32 <= bytes.size(); i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + i + 8 * l, 8);
      lane[l] = (lane[l] ^ w) * 0x9e3779b97f4a7c15ULL;
      lane[l] ^= lane[l] >> 29;
    }
  uint64_t h = mix64(bytes.size());
  for (uint64_t l : lane) h = mix64(h ^ l);
  for (; i < bytes.size(); ++i) h = mix64(h ^ bytes[i]);
  return h;
}

uint64_t digest_all(std::initializer_list<std::span<const uint8_t>> parts) {
  uint64_t h = 0;
  for (auto part : parts) h = digest(part, h);
  return h;
}

std::string hex16(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

template <class T>
std::span<const uint8_t> bytes_of(const T& value) {
  return {reinterpret_cast<const uint8_t*>(&value), sizeof(T)};
}

template <class T>
std::span<const uint8_t> bytes_of(std::span<const T> values) {
  return {reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()};
}

// Writes all of `bytes`; false on any error.
bool write_all(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}

bool read_all(int fd, std::span<uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::read(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

uint64_t kv_fingerprint(const gguf::File& file, const model::ModelConfig& c, int64_t block_size) {
  // The layout: keys and values in the cache's type (as ggml numbers it: F16 1, Q8_0 8; Q8_0
  // 8 + 256 since its keys lie four dimensions a lane, 8 + 512 since its values lie four slots a
  // lane, so that entries of an earlier Q8_0 layout are not read as this one), per layer and KV
  // head, in blocks of block_size positions.
  const int64_t type = c.kv_type == kernels::KvType::F16 ? 1 : 8 + 512;
  const int64_t layout[] = {type, c.n_cache_layers(), c.n_head_kv, c.head_dim, block_size};
  return digest_all({file.tensor_data(), bytes_of(std::span<const int64_t>(layout))});
}

KvDiskCache::KvDiskCache(KvDiskOptions options)
    : options_(std::move(options)), folder_((fs::path(options_.dir) / hex16(options_.fingerprint)).string()) {
  if (options_.max_bytes <= 0 || options_.block_size <= 0 || options_.block_bytes == 0)
    throw std::invalid_argument("KV disk cache: the bound, block size and block bytes must be positive");
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) throw std::runtime_error("KV disk cache: cannot create " + folder_ + ": " + ec.message());
  // The files already there, oldest first; half-written ones from a crash are removed.
  std::vector<std::pair<fs::file_time_type, std::pair<uint64_t, int64_t>>> found;
  for (fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    std::error_code file_ec;
    if (name.size() != 16 + std::strlen(kSuffix) || !name.ends_with(kSuffix)) {
      if (name.find(".tmp") != std::string::npos) fs::remove(p, file_ec);
      continue;
    }
    uint64_t hash = 0;
    bool hex = true;
    for (size_t i = 0; i < 16; ++i) {
      const char ch = name[i];
      const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
      if (d < 0) hex = false;
      hash = hash << 4 | static_cast<uint64_t>(std::max(d, 0));
    }
    const auto size = fs::file_size(p, file_ec);
    const auto time = fs::last_write_time(p, file_ec);
    if (hex && !file_ec) found.push_back({time, {hash, static_cast<int64_t>(size)}});
  }
  if (ec) throw std::runtime_error("KV disk cache: cannot read " + folder_ + ": " + ec.message());
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::lock_guard lock(mutex_);
  for (const auto& [time, entry] : found) insert(entry.first, entry.second);
  evict_over_bound();
  thread_ = std::thread([this] { writer(); });
}

KvDiskCache::~KvDiskCache() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

std::string KvDiskCache::path_of(uint64_t hash) const { return folder_ + "/" + hex16(hash) + kSuffix; }

bool KvDiskCache::contains(uint64_t hash) const {
  std::lock_guard lock(mutex_);
  return entries_.contains(hash);
}

bool KvDiskCache::store(uint64_t hash, std::span<const int32_t> prefix, std::span<const uint8_t> data) {
  if (data.size() != options_.block_bytes || prefix.empty() ||
      static_cast<int64_t>(prefix.size()) % options_.block_size != 0)
    throw std::invalid_argument("KV disk cache: a block is stored with its whole prefix and block_bytes of data");
  const size_t bytes = prefix.size_bytes() + data.size();
  {
    std::lock_guard lock(mutex_);
    if (entries_.contains(hash)) return true;
    if (queued_bytes_ + bytes > options_.max_queued_bytes) {
      ++counts_.dropped;
      return false;
    }
    queued_bytes_ += bytes;
    queue_.push_back({hash, {prefix.begin(), prefix.end()}, {data.begin(), data.end()}});
  }
  changed_.notify_all();
  return true;
}

bool KvDiskCache::load(uint64_t hash, std::span<const int32_t> prefix, std::span<uint8_t> data) {
  {
    std::lock_guard lock(mutex_);
    if (!entries_.contains(hash)) return false;
  }
  const std::string path = path_of(hash);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0;
  bool bad = false;  // the file is there but does not hold what its name says
  if (ok) {
    Header h{};
    std::vector<int32_t> tokens;
    uint64_t checksum = 0;
    bad = !read_all(fd, {reinterpret_cast<uint8_t*>(&h), sizeof h}) || std::memcmp(h.magic, kMagic, 4) != 0 ||
          h.version != kVersion || h.fingerprint != options_.fingerprint || h.hash != hash ||
          h.block_size != static_cast<uint64_t>(options_.block_size) || h.data_bytes != data.size() ||
          h.n_tokens == 0 || h.n_tokens > (uint64_t{1} << 24);
    if (!bad) {
      tokens.resize(h.n_tokens);
      bad = !read_all(fd, {reinterpret_cast<uint8_t*>(tokens.data()), tokens.size() * sizeof(int32_t)}) ||
            !read_all(fd, data) || !read_all(fd, {reinterpret_cast<uint8_t*>(&checksum), sizeof checksum});
    }
    uint8_t extra;
    if (!bad) bad = ::read(fd, &extra, 1) != 0;  // nothing after the checksum
    if (!bad)
      bad = checksum != digest_all({bytes_of(h), bytes_of(std::span<const int32_t>(tokens)),
                                    std::span<const uint8_t>(data)});
    // Another prefix with the same hash (a collision) is a miss, not an error.
    ok = !bad && std::equal(tokens.begin(), tokens.end(), prefix.begin(), prefix.end());
    ::close(fd);
  }
  std::lock_guard lock(mutex_);
  if (ok) {
    ++counts_.reads;
    touch(hash);
  } else if (bad || fd < 0) {
    ++counts_.read_errors;
    remove(hash);
  }
  return ok;
}

void KvDiskCache::flush() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queue_.empty() && !writing_; });
}

KvDiskStats KvDiskCache::stats() const {
  std::lock_guard lock(mutex_);
  KvDiskStats s = counts_;
  s.blocks = static_cast<int64_t>(entries_.size());
  s.bytes = total_bytes_;
  return s;
}

void KvDiskCache::writer() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every write done
    Write w = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    const bool ok = write_file(w);
    lock.lock();
    writing_ = false;
    queued_bytes_ -= w.prefix.size() * sizeof(int32_t) + w.data.size();
    if (ok) {
      ++counts_.writes;
      insert(w.hash, static_cast<int64_t>(sizeof(Header) + w.prefix.size() * sizeof(int32_t) + w.data.size() +
                                          sizeof(uint64_t)));
      evict_over_bound();
    } else {
      ++counts_.write_errors;
    }
    changed_.notify_all();
  }
}

bool KvDiskCache::write_file(const Write& w) {
  Header h{};
  std::memcpy(h.magic, kMagic, 4);
  h.version = kVersion;
  h.fingerprint = options_.fingerprint;
  h.hash = w.hash;
  h.block_size = static_cast<uint64_t>(options_.block_size);
  h.n_tokens = w.prefix.size();
  h.data_bytes = w.data.size();
  const auto tokens = bytes_of(std::span<const int32_t>(w.prefix));
  const uint64_t checksum = digest_all({bytes_of(h), tokens, std::span<const uint8_t>(w.data)});
  // Written under a temporary name, then renamed: a reader never sees half a file.
  const std::string path = path_of(w.hash), temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = write_all(fd, bytes_of(h)) && write_all(fd, tokens) && write_all(fd, w.data) &&
                  write_all(fd, bytes_of(checksum));
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

void KvDiskCache::insert(uint64_t hash, int64_t bytes) {
  forget(hash);  // written again: the file is the new one
  const uint64_t tick = next_tick_++;
  entries_[hash] = {bytes, tick};
  by_tick_[tick] = hash;
  total_bytes_ += bytes;
}

void KvDiskCache::touch(uint64_t hash) {
  const auto it = entries_.find(hash);
  if (it == entries_.end()) return;
  by_tick_.erase(it->second.tick);
  it->second.tick = next_tick_++;
  by_tick_[it->second.tick] = hash;
}

void KvDiskCache::forget(uint64_t hash) {
  const auto it = entries_.find(hash);
  if (it == entries_.end()) return;
  total_bytes_ -= it->second.bytes;
  by_tick_.erase(it->second.tick);
  entries_.erase(it);
}

void KvDiskCache::remove(uint64_t hash) {
  if (!entries_.contains(hash)) return;
  forget(hash);
  std::error_code ec;
  fs::remove(path_of(hash), ec);
}

void KvDiskCache::evict_over_bound() {
  while (total_bytes_ > options_.max_bytes && !by_tick_.empty()) {
    remove(by_tick_.begin()->second);
    ++counts_.evictions;
  }
}

}  // namespace nanoserve::engine
