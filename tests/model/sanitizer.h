// Whether this test binary runs under AddressSanitizer (about ten times slower): the
// longest model runs then check a shorter slice of the same thing.
#pragma once

namespace nanoserve::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace nanoserve::test
