// Malformed files: each is rejected with a FormatError that names the field and its
// byte offset — never a crash, a hang or a huge allocation.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/test_paths.h"

namespace nanoserve::gguf {
namespace {

// A hand-rolled GGUF encoder (independent of gguf::Writer) that remembers where each
// field starts, so a test can corrupt exactly one field.
class Builder {
 public:
  std::vector<uint8_t> bytes;
  std::map<std::string, size_t> at;

  template <typename T>
  void put(T v, const std::string& mark = "") {
    if (!mark.empty()) at[mark] = bytes.size();
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void str(const std::string& s, const std::string& mark = "") {
    put<uint64_t>(s.size(), mark);
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void pad(size_t align) {
    while (bytes.size() % align) bytes.push_back(0);
  }
  template <typename T>
  void patch(const std::string& mark, T v) {
    std::memcpy(bytes.data() + at.at(mark), &v, sizeof(T));
  }
};

// A valid two-tensor file: 3 metadata keys, F32 [8] and Q8_0 [32, 2].
Builder valid_file() {
  Builder b;
  b.bytes = {'G', 'G', 'U', 'F'};
  b.put<uint32_t>(3, "version");
  b.put<uint64_t>(2, "tensor_count");
  b.put<uint64_t>(3, "kv_count");
  b.str("general.architecture", "kv0.key");
  b.put<uint32_t>(8, "kv0.type");
  b.str("llama", "kv0.value");
  b.str("t.flag", "kv1.key");
  b.put<uint32_t>(7, "kv1.type");
  b.put<uint8_t>(1, "kv1.value");
  b.str("t.list", "kv2.key");
  b.put<uint32_t>(9, "kv2.type");
  b.put<uint32_t>(4, "kv2.elem_type");
  b.put<uint64_t>(3, "kv2.count");
  for (uint32_t i = 0; i < 3; ++i) b.put<uint32_t>(i);
  b.str("a.weight", "t0.name");
  b.put<uint32_t>(1, "t0.n_dims");
  b.put<uint64_t>(8, "t0.dim0");
  b.put<uint32_t>(0, "t0.type");
  b.put<uint64_t>(0, "t0.offset");
  b.str("b.weight", "t1.name");
  b.put<uint32_t>(2, "t1.n_dims");
  b.put<uint64_t>(32, "t1.dim0");
  b.put<uint64_t>(2, "t1.dim1");
  b.put<uint32_t>(8, "t1.type");
  b.put<uint64_t>(32, "t1.offset");
  b.pad(32);
  b.at["data"] = b.bytes.size();
  for (int i = 0; i < 32; ++i) b.bytes.push_back(static_cast<uint8_t>(i));  // a.weight
  for (int i = 0; i < 68; ++i) b.bytes.push_back(static_cast<uint8_t>(i));  // b.weight
  return b;
}

File parse(const std::vector<uint8_t>& bytes) { return File::parse({bytes.data(), bytes.size()}); }

TEST(Corrupt, ValidBaseFileParses) {
  Builder b = valid_file();
  File f = parse(b.bytes);
  EXPECT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.tensor("b.weight").n_bytes, 68u);
  EXPECT_EQ(f.tensor("b.weight").data[0], 0);
  EXPECT_EQ(f.metadata().get_ints("t.list"), (std::vector<int64_t>{0, 1, 2}));
}

// Every truncation point is an error that names a field, never a crash.
TEST(Corrupt, TruncatedAtEveryOffset) {
  Builder b = valid_file();
  for (size_t n = 0; n < b.bytes.size(); ++n) {
    std::vector<uint8_t> cut(b.bytes.begin(), b.bytes.begin() + static_cast<long>(n));
    try {
      parse(cut);
      ADD_FAILURE() << "truncation at " << n << " was accepted";
    } catch (const FormatError& e) {
      EXPECT_FALSE(e.field().empty());
      EXPECT_LE(e.offset(), n);
    }
  }
}

struct Case {
  const char* name;
  void (*corrupt)(Builder&);
  const char* field;   // substring of the error's field
  const char* mark;    // the field whose offset the error must report ("" = don't check)
  const char* detail;  // substring of the message
};

const Case kCases[] = {
    {"bad magic", [](Builder& b) { b.bytes[0] = 'X'; }, "magic", "", "not a GGUF file"},
    {"version 1", [](Builder& b) { b.patch<uint32_t>("version", 1); }, "version", "version", "unsupported GGUF version 1"},
    {"version 99", [](Builder& b) { b.patch<uint32_t>("version", 99); }, "version", "version", "unsupported"},
    {"absurd tensor count", [](Builder& b) { b.patch<uint64_t>("tensor_count", 1ull << 60); }, "tensor_count", "tensor_count", "cannot fit"},
    {"absurd kv count", [](Builder& b) { b.patch<uint64_t>("kv_count", ~0ull); }, "metadata_kv_count", "kv_count", "cannot fit"},
    {"huge key length", [](Builder& b) { b.patch<uint64_t>("kv0.key", 1ull << 62); }, "metadata[0] key", "kv0.key", "exceeds"},
    {"huge string value", [](Builder& b) { b.patch<uint64_t>("kv0.value", ~0ull - 3); }, "general.architecture", "kv0.value", "exceeds"},
    {"unknown value type", [](Builder& b) { b.patch<uint32_t>("kv0.type", 13); }, "type", "kv0.type", "unknown metadata value type 13"},
    {"bool out of range", [](Builder& b) { b.patch<uint8_t>("kv1.value", 7); }, "t.flag", "kv1.value", "neither 0 nor 1"},
    {"absurd array count", [](Builder& b) { b.patch<uint64_t>("kv2.count", 1ull << 61); }, "t.list", "kv2.count", "cannot fit"},
    {"unknown array element type", [](Builder& b) { b.patch<uint32_t>("kv2.elem_type", 77); }, "element type", "kv2.elem_type", "unknown"},
    {"duplicate key", [](Builder& b) { std::memcpy(b.bytes.data() + b.at["kv2.key"] + 8, "t.flag", 6); }, "t.flag", "kv2.key", "duplicate metadata key"},
    {"zero dims", [](Builder& b) { b.patch<uint32_t>("t0.n_dims", 0); }, "n_dims", "t0.n_dims", "dimensions"},
    {"five dims", [](Builder& b) { b.patch<uint32_t>("t0.n_dims", 5); }, "n_dims", "t0.n_dims", "dimensions"},
    {"dims overflow", [](Builder& b) { b.patch<uint64_t>("t1.dim0", 1ull << 40); b.patch<uint64_t>("t1.dim1", 1ull << 40); }, "dims", "t1.dim1", "overflows"},
    {"unknown tensor type", [](Builder& b) { b.patch<uint32_t>("t0.type", 4); }, "type", "t0.type", "unknown tensor type 4"},
    {"row not a block multiple", [](Builder& b) { b.patch<uint64_t>("t1.dim0", 33); }, "dims", "t1.n_dims", "block size"},
    {"unaligned offset", [](Builder& b) { b.patch<uint64_t>("t1.offset", 33); }, "offset", "t1.offset", "alignment"},
    {"offset past EOF", [](Builder& b) { b.patch<uint64_t>("t1.offset", 1ull << 40); }, "offset", "t1.offset", "past the end"},
    {"offset wraps around", [](Builder& b) { b.patch<uint64_t>("t1.offset", ~0ull - 31); }, "offset", "t1.offset", "past the end"},
    {"tensors overlap", [](Builder& b) { b.patch<uint64_t>("t1.offset", 0); }, "offset", "", "overlaps"},
    {"duplicate tensor name", [](Builder& b) { b.bytes[b.at["t1.name"] + 8] = 'a'; }, "tensor[1]", "t1.name", "duplicate tensor name"},
    {"data truncated", [](Builder& b) { b.bytes.resize(b.bytes.size() - 1); }, "offset", "t1.offset", "past the end"},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CorruptCase : public ::testing::TestWithParam<Case> {};

TEST_P(CorruptCase, IsRejectedWithFieldAndOffset) {
  const Case& c = GetParam();
  Builder b = valid_file();
  c.corrupt(b);
  try {
    parse(b.bytes);
    FAIL() << c.name << ": accepted";
  } catch (const FormatError& e) {
    std::string what = e.what();
    EXPECT_NE(e.field().find(c.field), std::string::npos) << c.name << ": " << what;
    if (*c.mark) {
      EXPECT_EQ(e.offset(), b.at.at(c.mark)) << c.name << ": " << what;
    }
    EXPECT_NE(what.find(c.detail), std::string::npos) << c.name << ": " << what;
    EXPECT_NE(what.find("byte offset " + std::to_string(e.offset())), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, CorruptCase, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(Corrupt, DeeplyNestedArraysAreRejected) {
  Builder b;
  b.bytes = {'G', 'G', 'U', 'F'};
  b.put<uint32_t>(3);
  b.put<uint64_t>(0);
  b.put<uint64_t>(1);
  b.str("deep");
  b.put<uint32_t>(9);
  for (int i = 0; i < 100; ++i) {
    b.put<uint32_t>(9);  // element type: array
    b.put<uint64_t>(1);  // one element
  }
  b.put<uint32_t>(0);
  b.put<uint64_t>(0);
  EXPECT_THROW(parse(b.bytes), FormatError);
}

TEST(Corrupt, BadAlignmentIsRejected) {
  for (uint32_t align : {0u, 3u, 48u}) {
    Builder b;
    b.bytes = {'G', 'G', 'U', 'F'};
    b.put<uint32_t>(3);
    b.put<uint64_t>(0);
    b.put<uint64_t>(1);
    b.str("general.alignment");
    b.put<uint32_t>(4);
    b.put<uint32_t>(align);
    try {
      parse(b.bytes);
      FAIL() << "alignment " << align << " accepted";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("general.alignment"), std::string::npos);
    }
  }
}

TEST(Corrupt, OpenNamesMissingAndEmptyFiles) {
  EXPECT_THROW(File::open("/nonexistent/model.gguf"), std::runtime_error);
  const std::string empty = test::temp_file("empty.gguf");
  { std::ofstream(empty, std::ios::binary); }
  try {
    File::open(empty);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos);
  }
}

}  // namespace
}  // namespace nanoserve::gguf
