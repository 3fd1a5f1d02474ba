// The most memory this process has held resident so far.
#pragma once

#include <cstdint>

namespace nanoserve::machine {

int64_t peak_rss_bytes();

}  // namespace nanoserve::machine
