#include "bench/readme_splice.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nanoserve::bench {

std::string splice_between_markers(const std::string& text, const std::string& content) {
  const std::string begin = kResultsBegin, end = kResultsEnd;
  const size_t b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos)
    throw std::runtime_error("no results markers: the file needs a line '" + begin + "' and, below it, '" + end + "'");
  if (text.find(begin, b + 1) != std::string::npos || text.find(end, e + 1) != std::string::npos)
    throw std::runtime_error("the results markers appear more than once");
  if (e < b) throw std::runtime_error("the results end marker comes before the begin marker");
  std::string body = content;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return text.substr(0, b + begin.size()) + "\n" + body + text.substr(e);
}

void splice_file(const std::string& path, const std::string& content) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string spliced = splice_between_markers(ss.str(), content);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << spliced;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace nanoserve::bench
