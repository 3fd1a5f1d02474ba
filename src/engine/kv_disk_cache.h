// The prefix cache's disk tier: whole KV blocks in files, found again after they left the pool
// and after a restart.
//
// One file per block, named by its chain hash (engine/prefix_index.h), in a folder named by the model's
// fingerprint (its tensor data and the KV layout: another model or cache layout never reads
// them). A file holds the tokens of the whole prefix up to and including its block, so a hit
// is exact, not a matter of hashes; a checksum covers the file. A truncated, corrupt or foreign
// file is a miss, counted, and removed. The folder stays under a byte bound: the least recently
// written or read files go first.
//
// Writes go through a queue to a thread of their own: store() copies the block and returns at
// once (it drops the block, counted, when the queue holds too many bytes), so the scheduler
// never waits for the disk. load() reads on the caller's thread: a hit is needed before its
// sequence can go on.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace nanoserve::gguf {
class File;
}

namespace nanoserve::model {
struct ModelConfig;
}

namespace nanoserve::engine {

// What identifies the keys and values a model computes: its tensor data and the cache's layout.
uint64_t kv_fingerprint(const gguf::File& file, const model::ModelConfig& config, int64_t block_size);

struct KvDiskOptions {
  std::string dir;              // the files go to dir/<fingerprint as 16 hex digits>/
  int64_t max_bytes = 0;        // the folder's bound
  uint64_t fingerprint = 0;
  int64_t block_size = 0;       // positions per block
  size_t block_bytes = 0;       // one block's keys and values
  size_t max_queued_bytes = size_t{256} << 20;  // writes waiting beyond this are dropped
};

struct KvDiskStats {
  int64_t blocks = 0, bytes = 0;  // files in the folder now
  uint64_t writes = 0, reads = 0;  // blocks written, blocks read back
  uint64_t write_errors = 0;      // failed writes
  uint64_t dropped = 0;           // blocks not queued: the queue held too many bytes
  uint64_t read_errors = 0;       // truncated, corrupt or foreign files
  uint64_t evictions = 0;         // files removed to stay under the bound
};

class KvDiskCache {
 public:
  // Creates the folder when needed and indexes the files already there (oldest first, by
  // modification time). Throws std::runtime_error when the folder cannot be made or read.
  explicit KvDiskCache(KvDiskOptions options);
  ~KvDiskCache();  // finishes the queued writes
  KvDiskCache(const KvDiskCache&) = delete;
  KvDiskCache& operator=(const KvDiskCache&) = delete;

  const std::string& folder() const { return folder_; }
  bool contains(uint64_t hash) const;
  // Queues the block whose chain hash is `hash`: `prefix` is every token up to and including
  // the block, `data` its keys and values (block_bytes, copied). False when dropped.
  bool store(uint64_t hash, std::span<const int32_t> prefix, std::span<const uint8_t> data);
  // Reads into `data` (block_bytes) the block of exactly `prefix` (hash: its chain hash).
  // False when there is none.
  bool load(uint64_t hash, std::span<const int32_t> prefix, std::span<uint8_t> data);
  // Waits until every queued write is done.
  void flush();
  KvDiskStats stats() const;

 private:
  struct Write {
    uint64_t hash;
    std::vector<int32_t> prefix;
    std::vector<uint8_t> data;
  };
  struct Entry {
    int64_t bytes = 0;
    uint64_t tick = 0;  // last written or read; smallest goes first
  };
  std::string path_of(uint64_t hash) const;
  void writer();
  bool write_file(const Write& w);
  void insert(uint64_t hash, int64_t bytes);  // under mutex_
  void touch(uint64_t hash);                  // under mutex_
  void forget(uint64_t hash);                 // under mutex_: the entry, not the file
  void remove(uint64_t hash);                 // under mutex_: the entry and its file
  void evict_over_bound();                    // under mutex_

  const KvDiskOptions options_;
  const std::string folder_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Write> queue_;
  size_t queued_bytes_ = 0;
  bool writing_ = false, stopping_ = false;
  std::unordered_map<uint64_t, Entry> entries_;
  std::map<uint64_t, uint64_t> by_tick_;  // tick -> hash
  uint64_t next_tick_ = 1;
  int64_t total_bytes_ = 0;
  KvDiskStats counts_;
  std::thread thread_;  // last: it starts once everything above exists
};

}  // namespace nanoserve::engine
