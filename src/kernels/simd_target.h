// The SIMD target the kernels dispatch to (Highway picks the best one this CPU supports), and
// NANOSERVE_SIMD, which caps it: with NANOSERVE_SIMD=avx2 an AVX-512 machine runs the AVX2
// kernels, so they can be measured there; =scalar (or =emu128, whichever the build has) runs the
// portable ones. Targets are named as Highway names them, in lower case: avx3_dl, avx3, avx2 on
// x86 (CMakeLists.txt says why not sse4 and ssse3), neon on Arm.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::kernels {

// The target the kernels dispatch to now ("AVX3_DL", "AVX2", "EMU128", ...).
std::string simd_target();

// The targets this CPU supports that the kernels are built for, best first, in lower case.
std::vector<std::string> supported_simd_targets();

// Caps dispatch at `name` (that target and the ones below it); "" lifts the cap. Call before
// the first kernel runs (dispatch is chosen once). Throws std::invalid_argument for a name
// that is not one of supported_simd_targets(), listing them.
void limit_simd_target(std::string_view name);

// limit_simd_target($NANOSERVE_SIMD) when it is set and not empty.
void limit_simd_target_from_environment();

}  // namespace nanoserve::kernels
