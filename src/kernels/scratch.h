// Scratch buffers that only grow: sized for the largest batch seen so far, so that steady-state
// steps allocate nothing (kernels never allocate on the hot path).
#pragma once

#include <cstddef>
#include <vector>

namespace nanoserve::kernels {

// Makes `buffer` hold at least n elements; never shrinks it.
template <class T>
void grow(std::vector<T>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
}

}  // namespace nanoserve::kernels
