// Anonymous memory with a huge-page hint, for buffers that are streamed as the model's weights
// are (the bandwidth measurement, the decode-traffic benchmark): with 4 KiB pages a stream
// costs a TLB walk every 4 KiB, which slows it. (gguf::File maps the weights
// themselves, aligned so that its copy can take the file mapping's place.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace nanoserve::kernels {

class HugePageBuffer {
 public:
  // Throws std::bad_alloc when the memory cannot be mapped. The pages are not touched.
  explicit HugePageBuffer(size_t size);
  ~HugePageBuffer();
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;

  uint8_t* data() { return data_; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  uint8_t* data_;
};

}  // namespace nanoserve::kernels
