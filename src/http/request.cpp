#include "http/request.h"

#include "http/token.h"

namespace nanoserve::http {

const std::string* Request::find_header(std::string_view lowercase_name) const {
  for (const Header& h : headers)
    if (h.name == lowercase_name) return &h.value;
  return nullptr;
}

std::string Request::header(std::string_view lowercase_name) const {
  const std::string* value = find_header(lowercase_name);
  return value ? *value : std::string();
}

bool Request::keep_alive() const {
  bool close = false, keep = false;
  for (const Header& h : headers) {
    if (h.name != "connection") continue;
    close = close || header_list_has(h.value, "close");
    keep = keep || header_list_has(h.value, "keep-alive");
  }
  return minor_version >= 1 ? !close : keep && !close;
}

bool header_list_has(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (equals_ignoring_case(trim_whitespace(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace nanoserve::http
