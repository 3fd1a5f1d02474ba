// Python source as the benchmark suite's spec phase and the lab's speculation experiment feed it to
// a model trained on code: a file's text from its first top-level definition on (a module's
// license and docstring are prose, which repeats itself less than code).
#pragma once

#include <string>

namespace nanoserve::bench {

// Throws std::runtime_error naming the file when it cannot be read.
std::string python_code(const std::string& path);

}  // namespace nanoserve::bench
