// The one 64-bit mixing function of the prefix cache's hashes (the prefix index's chain hashes,
// the disk tier's checksums and model fingerprint): splitmix64's finalizer, every input bit
// reaches every output bit. Fast and well spread; not a cryptographic hash (nothing trusts
// it alone: a match is always checked against the tokens).
#pragma once

#include <cstdint>

namespace nanoserve::engine {

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace nanoserve::engine
