#include "kernels/huge_pages.h"

#include <sys/mman.h>

#include <new>

namespace nanoserve::kernels {

HugePageBuffer::HugePageBuffer(size_t size) : size_(size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, size, MADV_HUGEPAGE);  // a hint: kernels without transparent huge pages ignore it
  data_ = static_cast<uint8_t*>(p);
}

HugePageBuffer::~HugePageBuffer() { ::munmap(data_, size_); }

}  // namespace nanoserve::kernels
