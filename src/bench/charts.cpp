#include "bench/charts.h"

#include <stdexcept>

namespace nanoserve::bench {

void make_charts(const ChartsOptions&) { throw std::runtime_error("not yet"); }

}  // namespace nanoserve::bench
