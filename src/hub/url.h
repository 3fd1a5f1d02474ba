// The few URL operations the Hub client needs: split off the origin, follow a Location.
#pragma once

#include <string>

namespace nanoserve::hub {

struct Url {
  std::string origin;  // "https://huggingface.co" or "http://127.0.0.1:8080": what a connection goes to
  std::string path;    // "/api/models/..." with any query, never empty
};

// http[s]://host[:port][/path]; throws std::invalid_argument naming `url` for anything else.
Url parse_url(const std::string& url);

// Where a redirect's Location leads from `from`: an absolute URL, or a path on the same origin.
Url follow_location(const Url& from, const std::string& location);

// `path` with the characters a URL path cannot carry %-escaped ('/' kept).
std::string escape_path(const std::string& path);

}  // namespace nanoserve::hub
