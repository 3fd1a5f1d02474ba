#include "bench/python_code.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nanoserve::bench {

std::string python_code(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  for (const char* start : {"\ndef ", "\nclass "})
    if (const size_t at = source.find(start); at != std::string::npos) return source.substr(at + 1);
  return source;
}

}  // namespace nanoserve::bench
