// Writer → reader round trip, and every real GGUF file we have loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/test_paths.h"

namespace nanoserve::gguf {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<std::pair<std::string, Value>> every_value_type() {
  return {
      {"general.architecture", Value::string("qwen3")},
      {"t.u8", Value::u8(250)},
      {"t.i8", Value::i8(-100)},
      {"t.u16", Value::u16(65000)},
      {"t.i16", Value::i16(-32000)},
      {"t.u32", Value::u32(4000000000u)},
      {"t.i32", Value::i32(-2000000000)},
      {"t.u64", Value::u64(18000000000000000000ull)},
      {"t.i64", Value::i64(-9000000000000000000ll)},
      {"t.f32", Value::f32(1.5e-6f)},
      {"t.f64", Value::f64(3.141592653589793)},
      {"t.bool", Value::boolean(true)},
      {"t.string.empty", Value::string("")},
      {"t.string.utf8", Value::string("héllo 世界 🙂\n\t\0x")},
      {"t.strings", Value::strings({"a", "", "Ġthe", "<|im_end|>"})},
      {"t.ints", Value::i32s({1, -2, 3})},
      {"t.floats", Value::f32s({0.5f, -1.25f})},
      {"t.nested", Value::array(ValueType::ARRAY, {Value::i32s({1, 2}), Value::i32s({}), Value::strings({"x"})})},
      {"t.empty_array", Value::array(ValueType::UINT8, {})},
  };
}

struct TestTensor {
  std::string name;
  TensorType type;
  std::vector<uint64_t> dims;
  std::vector<uint8_t> data;
};

std::string write_file(const std::vector<std::pair<std::string, Value>>& meta, const std::vector<TestTensor>& tensors,
                       uint32_t alignment) {
  std::ostringstream out;
  Writer w(out, alignment);
  for (const auto& [k, v] : meta) w.set(k, v);
  for (const auto& t : tensors) w.add_tensor(t.name, t.type, t.dims);
  w.write_header();
  for (const auto& t : tensors) {
    // Write in two pieces to exercise streaming.
    size_t half = t.data.size() / 2;
    w.write_data({t.data.data(), half});
    w.write_data({t.data.data() + half, t.data.size() - half});
  }
  w.finish();
  return out.str();
}

class RoundTrip : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RoundTrip, MetadataAndTensorsSurvive) {
  const uint32_t alignment = GetParam();
  auto meta = every_value_type();
  std::vector<TestTensor> tensors = {
      {"token_embd.weight", TensorType::Q8_0, {64, 3}, random_bytes(34 * 2 * 3, 1)},
      {"blk.0.attn_norm.weight", TensorType::F32, {7}, random_bytes(28, 2)},
      {"blk.0.ffn_down.weight", TensorType::Q4_K, {256, 2, 1}, random_bytes(144 * 2, 3)},
      {"x.bf16", TensorType::BF16, {3, 2, 2, 2}, random_bytes(2 * 24, 4)},
  };
  std::string bytes = write_file(meta, tensors, alignment);
  File f = File::parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});

  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  // The writer adds general.alignment only when it is not the default.
  size_t expected_keys = meta.size() + (alignment != kDefaultAlignment ? 1 : 0);
  ASSERT_EQ(f.metadata().entries().size(), expected_keys);
  for (const auto& [key, value] : meta) {
    const Value* read = f.metadata().find(key);
    ASSERT_NE(read, nullptr) << key;
    EXPECT_EQ(*read, value) << key;
  }
  ASSERT_EQ(f.tensors().size(), tensors.size());
  for (const auto& t : tensors) {
    const TensorInfo& info = f.tensor(t.name);
    EXPECT_EQ(info.type, t.type);
    EXPECT_EQ(info.dims, t.dims);
    EXPECT_EQ(info.offset % alignment, 0u);
    ASSERT_EQ(info.n_bytes, t.data.size());
    EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), info.data)) << t.name;
  }
  EXPECT_EQ(f.metadata().get_string("general.architecture"), "qwen3");
  EXPECT_EQ(f.metadata().get_u32("t.u32"), 4000000000u);
  EXPECT_EQ(f.metadata().get_strings("t.strings")[2], "Ġthe");
  EXPECT_EQ(f.metadata().get_ints("t.ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_FLOAT_EQ(f.metadata().get_f32("t.f32"), 1.5e-6f);
}

INSTANTIATE_TEST_SUITE_P(Alignments, RoundTrip, ::testing::Values(32u, 1u, 64u, 4096u));

TEST(Metadata, TypedGettersNameTheKey) {
  std::string bytes = write_file(every_value_type(), {}, 32);
  File f = File::parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  const Metadata& m = f.metadata();
  EXPECT_EQ(m.find("nope"), nullptr);
  try {
    (void)m.get_u32("nope.missing");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("nope.missing"), std::string::npos);
  }
  EXPECT_THROW((void)m.get_string("t.u8"), std::runtime_error);
  EXPECT_THROW((void)m.get_u32("t.u64"), std::runtime_error);  // does not fit
  EXPECT_THROW((void)m.get_u32("t.i8"), std::runtime_error);   // negative
  EXPECT_THROW((void)m.get_strings("t.ints"), std::runtime_error);
  EXPECT_THROW((void)f.tensor("missing.weight"), std::runtime_error);
}

TEST(Writer, RejectsMisuse) {
  std::ostringstream out;
  Writer w(out);
  w.add_tensor("a", TensorType::F32, {4});
  EXPECT_THROW(w.add_tensor("a", TensorType::F32, {4}), std::invalid_argument);
  EXPECT_THROW(w.add_tensor("b", TensorType::Q4_0, {33}), std::invalid_argument);
  EXPECT_THROW(w.add_tensor("c", TensorType::F32, {}), std::invalid_argument);
  w.write_header();
  EXPECT_THROW(w.set("late", Value::u8(1)), std::logic_error);
  std::vector<uint8_t> data(8);
  w.write_data(data);
  EXPECT_THROW(w.finish(), std::logic_error);  // 8 of 16 bytes
  std::vector<uint8_t> too_much(16);
  EXPECT_THROW(w.write_data(too_much), std::logic_error);
}

// The weights move into the process's own (huge-page) memory at the same addresses, so
// pointers taken before stay valid; writing there never reaches the file. A tensor larger
// than one 2 MiB copy chunk checks the chunked copy.
TEST(File, PrivateWritableCopyKeepsBytesAndAddresses) {
  const std::vector<TestTensor> tensors = {
      {"big", TensorType::F32, {(size_t{5} << 20) / 4 + 3}, random_bytes((size_t{5} << 20) + 12, 7)},
      {"small", TensorType::F32, {5}, random_bytes(20, 8)},
  };
  const std::string bytes = write_file({{"general.architecture", Value::string("qwen3")}}, tensors, 32);
  const std::string path = test::temp_file("private-copy.gguf");
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  {
    File f = File::open(path);
    const uint8_t* before = f.tensor("big").data;
    f.make_private_writable();
    for (const auto& t : tensors) {
      const TensorInfo& info = f.tensor(t.name);
      ASSERT_TRUE(std::equal(t.data.begin(), t.data.end(), info.data)) << t.name;
    }
    EXPECT_EQ(f.tensor("big").data, before);
    uint8_t* big = const_cast<uint8_t*>(before);
    big[0] ^= 0xff;
    big[tensors[0].data.size() - 1] ^= 0xff;
    EXPECT_EQ(big[0], static_cast<uint8_t>(tensors[0].data[0] ^ 0xff));
  }
  std::ifstream in(path, std::ios::binary);
  const std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  EXPECT_TRUE(on_disk == bytes);
}

// Every real GGUF file under ../shared loads, and its tensors sit inside the file.
TEST(SharedFiles, EveryGoldenModelLoads) {
  std::vector<std::string> dirs = {test::shared_path("golden/models"), test::shared_path("models/pycoder")};
  int loaded = 0;
  for (const auto& dir : dirs) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".gguf") continue;
      SCOPED_TRACE(entry.path().string());
      File f = File::open(entry.path().string());
      EXPECT_GE(f.version(), 2u);
      EXPECT_FALSE(f.metadata().get_string("general.architecture").empty());
      EXPECT_NE(f.find_tensor("token_embd.weight"), nullptr);
      EXPECT_GT(f.metadata().get_strings("tokenizer.ggml.tokens").size(), 0u);
      for (const auto& t : f.tensors()) {
        EXPECT_NE(t.data, nullptr);
        EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size()) << t.name;
      }
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 24);  // 20 golden models + 4 pycoder files
}

}  // namespace
}  // namespace nanoserve::gguf
