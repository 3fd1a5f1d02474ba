#include "hub/url.h"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>

namespace nanoserve::hub {

Url parse_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    throw std::invalid_argument("\"" + url + "\" is not an http:// or https:// URL");
  const size_t host_begin = scheme_end + 3;
  const size_t path_begin = url.find_first_of("/?", host_begin);
  const std::string authority = url.substr(host_begin, path_begin - host_begin);
  if (authority.empty() || authority.find('@') != std::string::npos)
    throw std::invalid_argument("\"" + url + "\" names no host (or has credentials in it)");
  std::string path = path_begin == std::string::npos ? "/" : url.substr(path_begin);
  if (path[0] == '?') path = "/" + path;
  return {scheme + "://" + authority, path};
}

Url follow_location(const Url& from, const std::string& location) {
  if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) return parse_url(location);
  if (location.empty() || location[0] != '/')
    throw std::invalid_argument("a redirect to \"" + location + "\", which is not a URL nor an absolute path");
  return {from.origin, location};
}

std::string escape_path(const std::string& path) {
  std::string out;
  for (const unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace nanoserve::hub
