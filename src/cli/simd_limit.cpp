#include "cli/commands.h"
#include "kernels/simd_target.h"

namespace nanoserve::cli {

void limit_simd_from_environment() { kernels::limit_simd_target_from_environment(); }

}  // namespace nanoserve::cli
