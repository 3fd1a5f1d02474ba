// The prefix cache's disk tier: blocks written in the background come back exactly, after a
// restart too; a truncated, corrupt or foreign file is a counted miss and is removed; another
// prefix under the same name is a miss; the folder stays under its bound, least recently used
// first; and a full write queue drops blocks rather than waiting.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "engine/kv_disk_cache.h"
#include "support/test_paths.h"

namespace nanoserve::engine::kv_disk_cache_test {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBlock = 4;
constexpr size_t kBlockBytes = 256;

KvDiskOptions options(const std::string& dir, int64_t max_bytes = 1 << 20, uint64_t fingerprint = 7) {
  return {.dir = dir, .max_bytes = max_bytes, .fingerprint = fingerprint, .block_size = kBlock,
          .block_bytes = kBlockBytes};
}

std::vector<int32_t> prefix(int blocks, int32_t first) {
  std::vector<int32_t> t(static_cast<size_t>(blocks * kBlock));
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::vector<uint8_t> data(uint8_t seed) {
  std::vector<uint8_t> d(kBlockBytes);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<uint8_t>(seed + i * 7);
  return d;
}

class KvDiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_ = nanoserve::test::temp_file("kv-disk");
};

TEST_F(KvDiskCacheTest, BlocksComeBackExactlyAfterARestart) {
  const std::vector<int32_t> p = prefix(2, 10);
  {
    KvDiskCache disk(options(dir_));
    ASSERT_TRUE(disk.store(111, p, data(1)));
    disk.flush();
    EXPECT_TRUE(disk.contains(111));
    EXPECT_EQ(disk.stats().writes, 1u);
    EXPECT_EQ(disk.stats().blocks, 1);
    EXPECT_GT(disk.stats().bytes, static_cast<int64_t>(kBlockBytes));
  }
  KvDiskCache disk(options(dir_));
  EXPECT_TRUE(disk.contains(111));
  std::vector<uint8_t> out(kBlockBytes);
  ASSERT_TRUE(disk.load(111, p, out));
  EXPECT_EQ(out, data(1));
  EXPECT_EQ(disk.stats().reads, 1u);
  // The same name for another prefix (a collision) is a miss, not an error, and keeps the file.
  EXPECT_FALSE(disk.load(111, prefix(2, 11), out));
  EXPECT_EQ(disk.stats().read_errors, 0u);
  EXPECT_TRUE(disk.contains(111));
  EXPECT_FALSE(disk.load(222, p, out));  // never stored
}

TEST_F(KvDiskCacheTest, AnotherModelsFolderIsNeverRead) {
  {
    KvDiskCache disk(options(dir_, 1 << 20, 7));
    disk.store(111, prefix(1, 0), data(1));
  }
  KvDiskCache other(options(dir_, 1 << 20, 8));
  EXPECT_FALSE(other.contains(111));
  EXPECT_EQ(other.stats().blocks, 0);
}

TEST_F(KvDiskCacheTest, TruncatedCorruptAndForeignFilesAreCountedMissesAndRemoved) {
  const std::vector<int32_t> p = prefix(1, 0);
  std::string folder;
  {
    KvDiskCache disk(options(dir_));
    folder = disk.folder();
    for (uint64_t hash : {1, 2, 3, 4}) disk.store(hash, p, data(static_cast<uint8_t>(hash)));
  }
  auto path = [&](const char* name) { return folder + "/" + name + ".kvb"; };
  const auto size = fs::file_size(path("0000000000000001"));
  fs::resize_file(path("0000000000000001"), size - 10);  // truncated
  {
    std::fstream f(path("0000000000000002"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x5a');  // one byte of the data changed
  }
  fs::copy_file(path("0000000000000004"), path("0000000000000003"), fs::copy_options::overwrite_existing);  // foreign
  std::ofstream(path("0000000000000005")) << "not a block";

  KvDiskCache disk(options(dir_));
  std::vector<uint8_t> out(kBlockBytes);
  for (uint64_t hash : {1, 2, 3, 5}) EXPECT_FALSE(disk.load(hash, p, out)) << hash;
  EXPECT_EQ(disk.stats().read_errors, 4u);
  for (uint64_t hash : {1, 2, 3, 5}) EXPECT_FALSE(disk.contains(hash)) << hash;
  EXPECT_FALSE(fs::exists(path("0000000000000001")));
  ASSERT_TRUE(disk.load(4, p, out));
  EXPECT_EQ(out, data(4));
  // A file removed behind its back is a miss too.
  fs::remove(path("0000000000000004"));
  EXPECT_FALSE(disk.load(4, p, out));
}

TEST_F(KvDiskCacheTest, TheFolderStaysUnderItsBoundLeastRecentlyUsedFirst) {
  int64_t file_bytes;
  {
    KvDiskCache probe(options(dir_ + "/probe"));
    probe.store(1, prefix(1, 0), data(0));
    probe.flush();
    file_bytes = probe.stats().bytes;
  }
  KvDiskCache disk(options(dir_, 3 * file_bytes));
  for (uint64_t hash : {1, 2, 3}) disk.store(hash, prefix(1, 0), data(0));
  disk.flush();
  std::vector<uint8_t> out(kBlockBytes);
  ASSERT_TRUE(disk.load(1, prefix(1, 0), out));  // 1 is now the most recently used
  disk.store(4, prefix(1, 0), data(0));
  disk.flush();
  EXPECT_EQ(disk.stats().blocks, 3);
  EXPECT_EQ(disk.stats().evictions, 1u);
  EXPECT_TRUE(disk.contains(1));
  EXPECT_FALSE(disk.contains(2));
  EXPECT_LE(disk.stats().bytes, 3 * file_bytes);
}

TEST_F(KvDiskCacheTest, AFullQueueDropsBlocksInsteadOfWaiting) {
  KvDiskOptions o = options(dir_);
  o.max_queued_bytes = kBlockBytes + kBlock * sizeof(int32_t);  // one block at a time
  KvDiskCache disk(o);
  int dropped = 0;
  for (uint64_t hash = 1; hash <= 50; ++hash) dropped += disk.store(hash, prefix(1, 0), data(0)) ? 0 : 1;
  disk.flush();
  EXPECT_EQ(disk.stats().dropped, static_cast<uint64_t>(dropped));
  EXPECT_EQ(disk.stats().writes + disk.stats().dropped, 50u);
  EXPECT_THROW(disk.store(99, prefix(1, 0), std::vector<uint8_t>(3)), std::invalid_argument);
}

}  // namespace
}  // namespace nanoserve::engine::kv_disk_cache_test
