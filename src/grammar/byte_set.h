// A set of byte values: what one step of a grammar may read.
#pragma once

#include <array>
#include <cstdint>

namespace nanoserve::grammar {

class ByteSet {
 public:
  ByteSet() = default;
  static ByteSet of(uint8_t byte) { return range(byte, byte); }
  static ByteSet range(uint8_t lo, uint8_t hi) {
    ByteSet s;
    s.add_range(lo, hi);
    return s;
  }

  void add(uint8_t byte) { bits_[byte >> 6] |= uint64_t{1} << (byte & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (unsigned b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  void add_all(const ByteSet& other) {
    for (int i = 0; i < 4; ++i) bits_[i] |= other.bits_[i];
  }
  void remove(uint8_t byte) { bits_[byte >> 6] &= ~(uint64_t{1} << (byte & 63)); }
  bool has(uint8_t byte) const { return (bits_[byte >> 6] >> (byte & 63)) & 1; }
  bool empty() const { return (bits_[0] | bits_[1] | bits_[2] | bits_[3]) == 0; }
  ByteSet complement() const {
    ByteSet s;
    for (int i = 0; i < 4; ++i) s.bits_[i] = ~bits_[i];
    return s;
  }
  bool operator==(const ByteSet&) const = default;

 private:
  std::array<uint64_t, 4> bits_{};
};

}  // namespace nanoserve::grammar
