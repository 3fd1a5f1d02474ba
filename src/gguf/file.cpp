// GGUF parsing. Layout (little-endian): magic "GGUF", u32 version, u64 tensor count,
// u64 metadata count, metadata entries (string key, u32 type, value), tensor infos
// (string name, u32 n_dims, u64 dims[n_dims], u32 type, u64 offset), padding to the
// alignment, then the tensor data section.
#include "gguf/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace nanoserve::gguf {

FormatError::FormatError(const std::string& field, uint64_t offset, const std::string& what)
    : std::runtime_error("GGUF " + field + " at byte offset " + std::to_string(offset) + ": " + what),
      field_(field),
      offset_(offset),
      detail_(what) {}

uint64_t TensorInfo::n_elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

// ---- Metadata ---------------------------------------------------------------------------

const Value* Metadata::find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value& Metadata::at(const std::string& key) const {
  const Value* v = find(key);
  if (!v) throw std::runtime_error("GGUF metadata key '" + key + "' is missing");
  return *v;
}

template <typename F>
static auto with_key(const std::string& key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("GGUF metadata key '" + key + "': " + e.what());
  }
}

uint32_t Metadata::get_u32(const std::string& key) const {
  return with_key(key, [&] {
    uint64_t v = at(key).as_u64();
    if (v > std::numeric_limits<uint32_t>::max()) throw std::runtime_error("value does not fit uint32");
    return static_cast<uint32_t>(v);
  });
}

std::vector<std::string> Metadata::get_strings(const std::string& key) const {
  return with_key(key, [&] {
    std::vector<std::string> out;
    const auto& arr = at(key).as_array();
    out.reserve(arr.items.size());
    for (const auto& v : arr.items) out.push_back(v.as_string());
    return out;
  });
}

std::vector<int64_t> Metadata::get_ints(const std::string& key) const {
  return with_key(key, [&] {
    std::vector<int64_t> out;
    const auto& arr = at(key).as_array();
    out.reserve(arr.items.size());
    for (const auto& v : arr.items) out.push_back(v.as_i64());
    return out;
  });
}

std::vector<float> Metadata::get_floats(const std::string& key) const {
  return with_key(key, [&] {
    std::vector<float> out;
    const auto& arr = at(key).as_array();
    out.reserve(arr.items.size());
    for (const auto& v : arr.items) out.push_back(static_cast<float>(v.as_f64()));
    return out;
  });
}

void Metadata::add(std::string key, Value value) {
  if (index_.count(key)) throw std::runtime_error("duplicate metadata key '" + key + "'");
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

// ---- Parser -----------------------------------------------------------------------------

// Bounds-checked cursor over the file bytes. Every read names the field it reads, so an
// error says what was being parsed and where.
class Parser {
 public:
  explicit Parser(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  void parse(File& file) {
    parse_header(file);
    parse_metadata(file);
    parse_alignment(file);
    parse_tensor_infos(file);
    parse_data_section(file);
  }

 private:
  static constexpr uint32_t kMaxNesting = 8;

  uint64_t remaining() const { return bytes_.size() - pos_; }

  void need(uint64_t n, const std::string& field) const {
    if (n > remaining())
      throw FormatError(field, pos_,
                        "needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
                            " remain in the file (truncated?)");
  }

  template <typename T>
  T read(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const std::string& field) {
    uint64_t at = pos_;
    uint64_t len = read<uint64_t>(field + " length");
    if (len > remaining()) {
      pos_ = at;
      throw FormatError(field, at,
                        "string length " + std::to_string(len) + " exceeds the " +
                            std::to_string(remaining() - 8) + " bytes left in the file");
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return s;
  }

  // Smallest encoding of one value of type t, used to reject absurd counts before allocating.
  static uint64_t min_size(ValueType t) {
    switch (t) {
      case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
      case ValueType::UINT16: case ValueType::INT16: return 2;
      case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
      case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
      case ValueType::STRING: return 8;
      case ValueType::ARRAY: return 12;
    }
    return 1;
  }

  ValueType read_value_type(const std::string& field) {
    uint64_t at = pos_;
    uint32_t t = read<uint32_t>(field);
    if (t > static_cast<uint32_t>(ValueType::FLOAT64))
      throw FormatError(field, at, "unknown metadata value type " + std::to_string(t));
    return static_cast<ValueType>(t);
  }

  Value read_value(ValueType t, const std::string& field, uint32_t depth) {
    switch (t) {
      case ValueType::UINT8: return Value::u8(read<uint8_t>(field));
      case ValueType::INT8: return Value::i8(read<int8_t>(field));
      case ValueType::UINT16: return Value::u16(read<uint16_t>(field));
      case ValueType::INT16: return Value::i16(read<int16_t>(field));
      case ValueType::UINT32: return Value::u32(read<uint32_t>(field));
      case ValueType::INT32: return Value::i32(read<int32_t>(field));
      case ValueType::UINT64: return Value::u64(read<uint64_t>(field));
      case ValueType::INT64: return Value::i64(read<int64_t>(field));
      case ValueType::FLOAT32: return Value::f32(read<float>(field));
      case ValueType::FLOAT64: return Value::f64(read<double>(field));
      case ValueType::BOOL: {
        uint64_t at = pos_;
        uint8_t b = read<uint8_t>(field);
        if (b > 1) throw FormatError(field, at, "bool value " + std::to_string(b) + " is neither 0 nor 1");
        return Value::boolean(b == 1);
      }
      case ValueType::STRING: return Value::string(read_string(field));
      case ValueType::ARRAY: return read_array(field, depth);
    }
    throw FormatError(field, pos_, "unknown metadata value type");
  }

  Value read_array(const std::string& field, uint32_t depth) {
    uint64_t at = pos_;
    if (depth >= kMaxNesting)
      throw FormatError(field, at, "arrays nested deeper than " + std::to_string(kMaxNesting) + " levels");
    ValueType elem = read_value_type(field + " element type");
    uint64_t count_at = pos_;
    uint64_t count = read<uint64_t>(field + " count");
    if (count > remaining() / min_size(elem))
      throw FormatError(field + " count", count_at,
                        "array of " + std::to_string(count) + " " + std::string(value_type_name(elem)) +
                            " values cannot fit in the " + std::to_string(remaining()) + " bytes left");
    std::vector<Value> items;
    items.reserve(count);
    for (uint64_t i = 0; i < count; ++i)
      items.push_back(read_value(elem, field + "[" + std::to_string(i) + "]", depth + 1));
    return Value::array(elem, std::move(items));
  }

  void parse_header(File& file) {
    need(4, "magic");
    if (std::memcmp(bytes_.data(), "GGUF", 4) != 0) throw FormatError("magic", 0, "not a GGUF file (magic is not \"GGUF\")");
    pos_ = 4;
    uint32_t version = read<uint32_t>("version");
    if (version != 2 && version != 3)
      throw FormatError("version", 4, "unsupported GGUF version " + std::to_string(version) + " (supported: 2, 3)");
    file.version_ = version;
    tensor_count_at_ = pos_;
    tensor_count_ = read<uint64_t>("tensor_count");
    uint64_t kv_at = pos_;
    kv_count_ = read<uint64_t>("metadata_kv_count");
    // A metadata entry takes at least 8 (key length) + 4 (type) + 1 bytes.
    if (kv_count_ > remaining() / 13)
      throw FormatError("metadata_kv_count", kv_at, "count " + std::to_string(kv_count_) + " cannot fit in the file");
    // A tensor info takes at least 8 (name length) + 4 (n_dims) + 8 (dim) + 4 (type) + 8 (offset) bytes.
    if (tensor_count_ > remaining() / 32)
      throw FormatError("tensor_count", tensor_count_at_, "count " + std::to_string(tensor_count_) + " cannot fit in the file");
  }

  void parse_metadata(File& file) {
    for (uint64_t i = 0; i < kv_count_; ++i) {
      uint64_t at = pos_;
      std::string field = "metadata[" + std::to_string(i) + "]";
      std::string key = read_string(field + " key");
      field = "metadata '" + key + "'";
      ValueType t = read_value_type(field + " type");
      Value v = read_value(t, field, 0);
      if (file.metadata_.contains(key)) throw FormatError(field, at, "duplicate metadata key");
      file.metadata_.add(std::move(key), std::move(v));
    }
  }

  void parse_alignment(File& file) {
    const Value* a = file.metadata_.find("general.alignment");
    if (!a) return;
    if (a->type() != ValueType::UINT32)
      throw FormatError("metadata 'general.alignment'", 0, "must be uint32, is " + std::string(value_type_name(a->type())));
    uint64_t align = a->as_u64();
    if (align == 0 || (align & (align - 1)) != 0)
      throw FormatError("metadata 'general.alignment'", 0, "alignment " + std::to_string(align) + " is not a power of two");
    file.alignment_ = static_cast<uint32_t>(align);
  }

  void parse_tensor_infos(File& file) {
    file.tensors_.reserve(tensor_count_);
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      uint64_t at = pos_;
      std::string field = "tensor[" + std::to_string(i) + "]";
      TensorInfo t;
      t.name = read_string(field + " name");
      field += " '" + t.name + "'";
      if (file.tensor_index_.count(t.name)) throw FormatError(field, at, "duplicate tensor name");

      uint64_t dims_at = pos_;
      uint32_t n_dims = read<uint32_t>(field + " n_dims");
      if (n_dims == 0 || n_dims > kMaxDims)
        throw FormatError(field + " n_dims", dims_at, std::to_string(n_dims) + " dimensions (must be 1.." + std::to_string(kMaxDims) + ")");
      uint64_t n_elements = 1;
      for (uint32_t d = 0; d < n_dims; ++d) {
        uint64_t dim_at = pos_;
        uint64_t dim = read<uint64_t>(field + " dims[" + std::to_string(d) + "]");
        if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            (dim != 0 && n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / dim))
          throw FormatError(field + " dims", dim_at, "element count overflows int64");
        n_elements *= dim;
        t.dims.push_back(dim);
      }

      uint64_t type_at = pos_;
      uint32_t type_id = read<uint32_t>(field + " type");
      const TypeInfo* info = type_info(type_id);
      if (!info) throw FormatError(field + " type", type_at, "unknown tensor type " + std::to_string(type_id));
      t.type = info->type;
      if (t.dims[0] % info->block_elems != 0)
        throw FormatError(field + " dims", dims_at,
                          "row length " + std::to_string(t.dims[0]) + " is not a multiple of " + std::string(info->name) +
                              "'s block size " + std::to_string(info->block_elems));
      // n_elements < 2^63 and block_bytes / block_elems <= 8, so this product cannot overflow.
      t.n_bytes = n_elements / info->block_elems * info->block_bytes;

      uint64_t offset_at = pos_;
      t.offset = read<uint64_t>(field + " offset");
      if (t.offset % file.alignment_ != 0)
        throw FormatError(field + " offset", offset_at,
                          "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                              std::to_string(file.alignment_));
      offset_fields_.push_back(offset_at);
      file.tensor_index_.emplace(t.name, file.tensors_.size());
      file.tensors_.push_back(std::move(t));
    }
  }

  void parse_data_section(File& file) {
    uint64_t align = file.alignment_;
    uint64_t data_offset = pos_ + (align - pos_ % align) % align;
    file.data_offset_ = data_offset;
    if (file.tensors_.empty()) return;
    if (data_offset > bytes_.size())
      throw FormatError("data section", pos_, "starts at " + std::to_string(data_offset) + ", past the end of the file");
    uint64_t data_size = bytes_.size() - data_offset;

    for (size_t i = 0; i < file.tensors_.size(); ++i) {
      TensorInfo& t = file.tensors_[i];
      if (t.offset > data_size || t.n_bytes > data_size - t.offset)
        throw FormatError("tensor[" + std::to_string(i) + "] '" + t.name + "' offset", offset_fields_[i],
                          "data [" + std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
                              ") runs past the end of the file's " + std::to_string(data_size) + "-byte data section");
      t.data = bytes_.data() + data_offset + t.offset;
    }

    // No two tensors may share bytes.
    std::vector<size_t> order(file.tensors_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return file.tensors_[a].offset < file.tensors_[b].offset; });
    for (size_t k = 1; k < order.size(); ++k) {
      const TensorInfo& prev = file.tensors_[order[k - 1]];
      const TensorInfo& cur = file.tensors_[order[k]];
      if (prev.offset + prev.n_bytes > cur.offset)
        throw FormatError("tensor[" + std::to_string(order[k]) + "] '" + cur.name + "' offset", offset_fields_[order[k]],
                          "data overlaps tensor '" + prev.name + "'");
    }
  }

  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  uint64_t tensor_count_ = 0;
  uint64_t tensor_count_at_ = 0;
  uint64_t kv_count_ = 0;
  std::vector<uint64_t> offset_fields_;  // byte offset of each tensor's offset field, for messages
};

// ---- File -------------------------------------------------------------------------------

File File::parse(std::span<const uint8_t> bytes) {
  File file;
  file.bytes_ = bytes;
  Parser(bytes).parse(file);
  return file;
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t round_up_huge(size_t n) { return (n + kHugePage - 1) / kHugePage * kHugePage; }
size_t round_up_page(size_t n) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

// An anonymous mapping of `span` bytes (a multiple of kHugePage) that starts at a huge-page
// boundary: one huge page more is mapped, then the unused head and tail are returned.
// nullptr when the kernel refuses (errno says why).
uint8_t* map_huge_aligned(size_t span, int prot, int flags) {
  void* area = ::mmap(nullptr, span + kHugePage, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  if (area == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(area), end = start + span + kHugePage;
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) ::munmap(area, aligned - start);
  if (end > aligned + span) ::munmap(reinterpret_cast<void*>(aligned + span), end - (aligned + span));
  return reinterpret_cast<uint8_t*>(aligned);
}

}  // namespace

File File::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot stat " + path + ": " + std::strerror(err));
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    throw FormatError("magic", 0, path + " is empty");
  }
  // Mapped at a huge-page boundary, so that make_private_writable's copy can keep huge pages
  // at the same addresses. What lies between the file's end and the next huge page stays
  // reserved (PROT_NONE), so the whole span is this File's and make_private_writable may
  // replace it at once.
  const size_t span = round_up_huge(size);
  uint8_t* reserved = map_huge_aligned(span, PROT_NONE, MAP_NORESERVE);
  if (!reserved) {
    int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot reserve address space for " + path + ": " + std::strerror(err));
  }
  void* addr = ::mmap(reserved, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED) {
    ::munmap(reserved, span);
    throw std::runtime_error("cannot mmap " + path + ": " + std::strerror(err));
  }
  std::shared_ptr<void> mapping(addr, [span](void* p) { ::munmap(p, span); });

  try {
    File file = parse({static_cast<const uint8_t*>(addr), size});
    file.mapping_ = std::move(mapping);
    return file;
  } catch (const FormatError& e) {
    throw FormatError(e.field(), e.offset(), e.detail() + " (in " + path + ")");
  }
}

void File::make_private_writable() {
  if (!mapping_) throw std::logic_error("make_private_writable: the bytes are not a mapping of this File");
  const size_t size = bytes_.size(), span = round_up_huge(size);
  uint8_t* copy = map_huge_aligned(span, PROT_READ | PROT_WRITE, 0);
  if (!copy)
    throw std::runtime_error(std::string("cannot allocate memory for the model's weights: ") + std::strerror(errno));
  ::madvise(copy, span, MADV_HUGEPAGE);  // a hint: decode reads every page once per token
  // Copied a chunk at a time, each mapped file page released once copied, so the process
  // never holds both copies.
  uint8_t* mapped = static_cast<uint8_t*>(mapping_.get());
  for (size_t off = 0; off < size; off += kHugePage) {
    const size_t n = std::min(kHugePage, size - off);
    std::memcpy(copy + off, mapped + off, n);
    ::madvise(mapped + off, round_up_page(n), MADV_DONTNEED);
  }
  // The copy takes the mapping's place, at the same addresses, so every pointer into the
  // bytes stays valid.
  if (::mremap(copy, span, span, MREMAP_MAYMOVE | MREMAP_FIXED, mapped) == MAP_FAILED) {
    const int err = errno;
    ::munmap(copy, span);
    throw std::runtime_error(std::string("cannot move the model's weights: ") + std::strerror(err));
  }
}

const TensorInfo* File::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::tensor(const std::string& name) const {
  const TensorInfo* t = find_tensor(name);
  if (!t) throw std::runtime_error("GGUF tensor '" + name + "' is missing");
  return *t;
}

}  // namespace nanoserve::gguf
