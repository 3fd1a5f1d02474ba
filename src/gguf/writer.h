// Streams a GGUF v3 file: metadata and tensor infos first, then each tensor's bytes in
// declaration order, so a large model is written without holding it in memory.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "gguf/value.h"

namespace nanoserve::gguf {

class Writer {
 public:
  explicit Writer(std::ostream& out, uint32_t alignment = 32);

  void set(std::string key, Value value);  // before write_header(); replaces an existing key
  void add_tensor(std::string name, TensorType type, std::vector<uint64_t> dims);

  // Writes header, metadata and tensor infos. Call once, after every set/add_tensor.
  void write_header();
  // Appends bytes of the current tensor (tensors in add_tensor order; a tensor may be
  // written in several pieces). Pads to the alignment when a tensor is complete.
  void write_data(std::span<const uint8_t> bytes);
  // Checks that every tensor was written in full and flushes.
  void finish();

 private:
  struct Pending {
    std::string name;
    TensorType type;
    std::vector<uint64_t> dims;
    uint64_t n_bytes;
  };
  void pad_to_alignment();

  std::ostream& out_;
  uint32_t alignment_;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<Pending> tensors_;
  bool header_written_ = false;
  size_t current_ = 0;         // tensor being written
  uint64_t current_done_ = 0;  // bytes of it written so far
  uint64_t position_ = 0;      // bytes written to out_
};

}  // namespace nanoserve::gguf
