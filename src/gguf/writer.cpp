#include "gguf/writer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace nanoserve::gguf {
namespace {

template <typename T>
void put(std::ostream& out, uint64_t& position, T v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof(T));
  position += sizeof(T);
}

void put_string(std::ostream& out, uint64_t& position, const std::string& s) {
  put<uint64_t>(out, position, s.size());
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
  position += s.size();
}

void put_value(std::ostream& out, uint64_t& position, const Value& v) {
  switch (v.type()) {
    case ValueType::UINT8: put<uint8_t>(out, position, static_cast<uint8_t>(v.as_u64())); break;
    case ValueType::INT8: put<int8_t>(out, position, static_cast<int8_t>(v.as_i64())); break;
    case ValueType::UINT16: put<uint16_t>(out, position, static_cast<uint16_t>(v.as_u64())); break;
    case ValueType::INT16: put<int16_t>(out, position, static_cast<int16_t>(v.as_i64())); break;
    case ValueType::UINT32: put<uint32_t>(out, position, static_cast<uint32_t>(v.as_u64())); break;
    case ValueType::INT32: put<int32_t>(out, position, static_cast<int32_t>(v.as_i64())); break;
    case ValueType::UINT64: put<uint64_t>(out, position, v.as_u64()); break;
    case ValueType::INT64: put<int64_t>(out, position, v.as_i64()); break;
    case ValueType::FLOAT32: put<float>(out, position, static_cast<float>(v.as_f64())); break;
    case ValueType::FLOAT64: put<double>(out, position, v.as_f64()); break;
    case ValueType::BOOL: put<uint8_t>(out, position, v.as_bool() ? 1 : 0); break;
    case ValueType::STRING: put_string(out, position, v.as_string()); break;
    case ValueType::ARRAY: {
      const auto& arr = v.as_array();
      put<uint32_t>(out, position, static_cast<uint32_t>(arr.elem_type));
      put<uint64_t>(out, position, arr.items.size());
      for (const auto& item : arr.items) {
        if (item.type() != arr.elem_type) throw std::invalid_argument("GGUF writer: array item type differs from its element type");
        put_value(out, position, item);
      }
      break;
    }
  }
}

}  // namespace

Writer::Writer(std::ostream& out, uint32_t alignment) : out_(out), alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("GGUF writer: alignment must be a power of two");
  if (alignment != 32) set("general.alignment", Value::u32(alignment));
}

void Writer::set(std::string key, Value value) {
  if (header_written_) throw std::logic_error("GGUF writer: metadata set after the header was written");
  auto it = std::find_if(metadata_.begin(), metadata_.end(), [&](const auto& kv) { return kv.first == key; });
  if (it != metadata_.end())
    it->second = std::move(value);
  else
    metadata_.emplace_back(std::move(key), std::move(value));
}

void Writer::add_tensor(std::string name, TensorType type, std::vector<uint64_t> dims) {
  if (header_written_) throw std::logic_error("GGUF writer: tensor added after the header was written");
  if (dims.empty() || dims.size() > 4) throw std::invalid_argument("GGUF writer: tensor '" + name + "' needs 1..4 dims");
  for (const auto& t : tensors_)
    if (t.name == name) throw std::invalid_argument("GGUF writer: duplicate tensor '" + name + "'");
  auto row = row_bytes(type, dims[0]);
  if (!row) throw std::invalid_argument("GGUF writer: tensor '" + name + "' row length is not a multiple of the block size");
  uint64_t n_bytes = *row;
  for (size_t i = 1; i < dims.size(); ++i) n_bytes *= dims[i];
  tensors_.push_back({std::move(name), type, std::move(dims), n_bytes});
}

void Writer::pad_to_alignment() {
  static const char zeros[256] = {};
  uint64_t pad = (alignment_ - position_ % alignment_) % alignment_;
  while (pad > 0) {
    uint64_t n = std::min<uint64_t>(pad, sizeof(zeros));
    out_.write(zeros, static_cast<std::streamsize>(n));
    position_ += n;
    pad -= n;
  }
}

void Writer::write_header() {
  if (header_written_) throw std::logic_error("GGUF writer: header written twice");
  header_written_ = true;
  out_.write("GGUF", 4);
  position_ = 4;
  put<uint32_t>(out_, position_, 3);
  put<uint64_t>(out_, position_, tensors_.size());
  put<uint64_t>(out_, position_, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(out_, position_, key);
    put<uint32_t>(out_, position_, static_cast<uint32_t>(value.type()));
    put_value(out_, position_, value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    put_string(out_, position_, t.name);
    put<uint32_t>(out_, position_, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put<uint64_t>(out_, position_, d);
    put<uint32_t>(out_, position_, static_cast<uint32_t>(t.type));
    put<uint64_t>(out_, position_, offset);
    offset += t.n_bytes + (alignment_ - t.n_bytes % alignment_) % alignment_;
  }
  pad_to_alignment();
  if (!out_) throw std::runtime_error("GGUF writer: write failed");
}

void Writer::write_data(std::span<const uint8_t> bytes) {
  if (!header_written_) throw std::logic_error("GGUF writer: tensor data before the header");
  while (!bytes.empty()) {
    if (current_ >= tensors_.size()) throw std::logic_error("GGUF writer: more tensor data than declared");
    const Pending& t = tensors_[current_];
    uint64_t n = std::min<uint64_t>(bytes.size(), t.n_bytes - current_done_);
    out_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(n));
    position_ += n;
    current_done_ += n;
    bytes = bytes.subspan(n);
    if (current_done_ == t.n_bytes) {
      pad_to_alignment();
      ++current_;
      current_done_ = 0;
    }
  }
  if (!out_) throw std::runtime_error("GGUF writer: write failed");
}

void Writer::finish() {
  // Zero-byte tensors complete without any write_data call.
  while (current_ < tensors_.size() && tensors_[current_].n_bytes == 0) ++current_;
  if (current_ != tensors_.size())
    throw std::logic_error("GGUF writer: tensor '" + tensors_[current_].name + "' was not written in full");
  out_.flush();
  if (!out_) throw std::runtime_error("GGUF writer: write failed");
}

}  // namespace nanoserve::gguf
