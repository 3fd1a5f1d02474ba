#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/routes.h"
#include "server/web_assets.h"

namespace nanoserve::server {
namespace {

constexpr std::string_view kIndex = "index.html";  // answers GET / (and lab/index.html GET /lab/)

// Scripts, styles, images and fetches from this server only, and none inline: model output
// that became markup by mistake could still run nothing. No plugins, no <base>, no form posted
// anywhere, and the page in no other site's frame.
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// index.html answers /, DIR/index.html /DIR/ (and /DIR), every other file /<name>.
std::vector<std::string> paths_of(const WebAsset& asset) {
  if (asset.name == kIndex) return {"/"};
  if (asset.name.ends_with(fmt::format("/{}", kIndex))) {
    const std::string_view dir = asset.name.substr(0, asset.name.size() - kIndex.size() - 1);
    return {fmt::format("/{}/", dir), fmt::format("/{}", dir)};
  }
  return {fmt::format("/{}", asset.name)};
}

// The kinds of file that CMakeLists.txt embeds from web/.
std::string content_type_of(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".mjs")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  throw std::logic_error(fmt::format("web/{}: no Content-Type for this kind of file", name));
}

// A strong validator of the content (64-bit FNV-1a): a browser revalidates with If-None-Match
// and gets 304 until the binary serves another page.
std::string etag_of(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325u;
  for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  return fmt::format("\"{:016x}\"", hash);
}

http::Handler serve(const WebAsset& asset) {
  const std::string etag = etag_of(asset.bytes);
  // no-cache: kept, but checked with the server before each use (a new build may change it).
  const std::vector<http::Header> headers = {{"Content-Security-Policy", kContentSecurityPolicy},
                                             {"X-Content-Type-Options", "nosniff"},
                                             {"Referrer-Policy", "no-referrer"},
                                             {"Cache-Control", "no-cache"},
                                             {"ETag", etag}};
  const http::Response whole{
      .status = 200, .content_type = content_type_of(asset.name), .headers = headers, .body = std::string(asset.bytes)};
  const http::Response unchanged{.status = 304, .content_type = "", .headers = headers, .body = ""};
  return [whole, unchanged, etag](const http::Request& req, http::ResponseWriter& res) {
    res.send(http::header_list_has(req.header("if-none-match"), etag) ? unchanged : whole);
  };
}

}  // namespace

std::vector<http::Route> static_routes() {
  std::vector<http::Route> routes;
  for (const WebAsset& asset : web_assets())
    for (std::string& path : paths_of(asset))
      routes.push_back({.method = "GET", .path = std::move(path), .handler = serve(asset), .on_event_loop = false});
  return routes;
}

bool is_static_page(std::string_view path) {
  // Asked of every request (the API key check): the pages' paths are worked out once.
  static const std::set<std::string, std::less<>> paths = [] {
    std::set<std::string, std::less<>> all;
    for (const WebAsset& asset : web_assets())
      for (std::string& p : paths_of(asset)) all.insert(std::move(p));
    return all;
  }();
  return paths.contains(path);
}

}  // namespace nanoserve::server
