// Read-only view of a GGUF file (v2 or v3). The file is memory-mapped; tensor data
// is never copied. Everything the file controls is validated before use: a bad file
// throws gguf::FormatError naming the field and its byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "gguf/value.h"

namespace nanoserve::gguf {

class FormatError : public std::runtime_error {
 public:
  FormatError(const std::string& field, uint64_t offset, const std::string& what);
  const std::string& field() const { return field_; }
  uint64_t offset() const { return offset_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string field_;
  uint64_t offset_;
  std::string detail_;
};

inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr int kMaxDims = 4;

struct TensorInfo {
  std::string name;
  TensorType type;
  std::vector<uint64_t> dims;  // dims[0] is the contiguous (row) dimension, as in ggml
  uint64_t offset = 0;         // relative to the start of the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // points into the mapped file

  uint64_t n_elements() const;
  uint64_t row_length() const { return dims.empty() ? 1 : dims[0]; }
  uint64_t n_rows() const { return row_length() == 0 ? 0 : n_elements() / row_length(); }
  std::span<const uint8_t> bytes() const { return {data, static_cast<size_t>(n_bytes)}; }
};

class Metadata {
 public:
  const Value* find(const std::string& key) const;
  bool contains(const std::string& key) const { return find(key) != nullptr; }
  // Typed getters: throw std::runtime_error naming the key when it is missing or of a wrong type.
  const Value& at(const std::string& key) const;
  uint64_t get_u64(const std::string& key) const { return at(key).as_u64(); }
  uint32_t get_u32(const std::string& key) const;
  int64_t get_i64(const std::string& key) const { return at(key).as_i64(); }
  double get_f64(const std::string& key) const { return at(key).as_f64(); }
  float get_f32(const std::string& key) const { return static_cast<float>(get_f64(key)); }
  bool get_bool(const std::string& key) const { return at(key).as_bool(); }
  const std::string& get_string(const std::string& key) const { return at(key).as_string(); }
  std::vector<std::string> get_strings(const std::string& key) const;
  std::vector<int64_t> get_ints(const std::string& key) const;
  std::vector<float> get_floats(const std::string& key) const;

  // Keys in file order.
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  void add(std::string key, Value value);  // throws on a duplicate key

 private:
  std::vector<std::pair<std::string, Value>> entries_;
  std::map<std::string, size_t, std::less<>> index_;
};

class File {
 public:
  // Memory-maps and parses the file at `path`.
  static File open(const std::string& path);
  // Parses bytes owned by the caller (they must outlive the File).
  static File parse(std::span<const uint8_t> bytes);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the tensor data section
  uint64_t file_size() const { return bytes_.size(); }
  std::span<const uint8_t> tensor_data() const { return bytes_.subspan(data_offset_); }  // every tensor's bytes
  const Metadata& metadata() const { return metadata_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(const std::string& name) const;
  const TensorInfo& tensor(const std::string& name) const;  // throws when absent
  // Makes the bytes writable, for rewriting tensors in place (a kernel-friendly layout): they
  // move into this process's own memory, in huge pages where the kernel allows (decode reads
  // every weight once per token, and 4 KiB pages cost a TLB walk each), at the same
  // addresses, so pointers into them stay valid. The file never changes. Throws
  // std::logic_error for a parse()d File (its bytes are not ours).
  void make_private_writable();

 private:
  File() = default;
  std::shared_ptr<void> mapping_;  // keeps the mmap alive; empty for parse()
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
  friend class Parser;
};

}  // namespace nanoserve::gguf
