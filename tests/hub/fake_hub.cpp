#include "hub/fake_hub.h"

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace nanoserve::test {

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += "0123456789abcdef"[digest[i] >> 4];
    hex += "0123456789abcdef"[digest[i] & 15];
  }
  return hex;
}

FakeHub::FakeHub() {
  route_hub();
  route_file_host();
  hub_port_ = hub_.bind_to_any_port("127.0.0.1");
  file_port_ = file_host_.bind_to_any_port("127.0.0.1");
  if (hub_port_ <= 0 || file_port_ <= 0) throw std::runtime_error("the fake Hub could not bind 127.0.0.1");
  // Bound sockets already listen: connections wait in their backlogs until the threads accept.
  hub_thread_ = std::thread([this] { hub_.listen_after_bind(); });
  file_thread_ = std::thread([this] { file_host_.listen_after_bind(); });
  // httplib's stop() does nothing until its listen loop has begun, and the destructor joins that
  // loop: waiting for both here lets a FakeHub be destroyed at any time (a test fixture whose
  // later member throws while being built destroyed it at once, and the join never returned).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!hub_.is_running() || !file_host_.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) std::abort();  // neither stoppable nor joinable
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

FakeHub::~FakeHub() {
  hub_.stop();
  file_host_.stop();
  hub_thread_.join();
  file_thread_.join();
}

void FakeHub::add_repo(const std::string& name, FakeRepo repo) {
  std::lock_guard lock(mutex_);
  repos_[name] = std::move(repo);
}

std::string FakeHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }

hub::HubConfig FakeHub::config(const std::string& token) const {
  hub::HubConfig c;
  c.endpoint = endpoint();
  c.token = token;
  c.connect_timeout = std::chrono::seconds(5);
  c.read_timeout = std::chrono::seconds(5);
  return c;
}

std::vector<FakeHub::Seen> FakeHub::hub_requests() const {
  std::lock_guard lock(mutex_);
  return hub_seen_;
}

std::vector<FakeHub::Seen> FakeHub::file_requests() const {
  std::lock_guard lock(mutex_);
  return file_seen_;
}

const FakeFile* FakeHub::find(const std::string& repo, const std::string& path) const {
  const auto r = repos_.find(repo);
  if (r == repos_.end()) return nullptr;
  const auto& files = r->second.files;
  const auto f = std::find_if(files.begin(), files.end(), [&](const FakeFile& x) { return x.path == path; });
  return f == files.end() ? nullptr : &*f;
}

// As the Hub does: an unknown repo is 401 RepoNotFound without a token (private ones are not told
// apart) and 404 with one; a private repo is 401 without a token and 403 with a wrong one.
const FakeRepo* FakeHub::readable(const httplib::Request& req, httplib::Response& res, const std::string& repo) const {
  const std::string auth = req.get_header_value("Authorization");
  const auto r = repos_.find(repo);
  if (r == repos_.end()) {
    res.status = auth.empty() ? 401 : 404;
    res.set_header("X-Error-Code", "RepoNotFound");
    res.set_content(R"({"error":"Repository not found"})", "application/json");
    return nullptr;
  }
  if (r->second.is_private && auth != std::string("Bearer ") + kFakeToken) {
    res.status = auth.empty() ? 401 : 403;
    res.set_content(R"({"error":"Access to this repo is restricted"})", "application/json");
    return nullptr;
  }
  return &r->second;
}

void FakeHub::route_hub() {
  hub_.Get(R"(/api/models/([^/]+/[^/]+)/tree/main)", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    hub_seen_.push_back({req.path, req.get_header_value("Authorization"), req.get_header_value("Range")});
    const FakeRepo* repo = readable(req, res, req.matches[1]);
    if (!repo) return;
    nlohmann::json list = nlohmann::json::array({{{"type", "directory"}, {"oid", "0"}, {"size", 0}, {"path", "docs"}}});
    for (const FakeFile& f : repo->files) {
      const std::string sha = f.stated_sha256.empty() ? sha256_hex(f.content) : f.stated_sha256;
      list.push_back({{"type", "file"}, {"oid", "1234"}, {"size", f.content.size()}, {"path", f.path},
                      {"lfs", {{"oid", sha}, {"size", f.content.size()}, {"pointerSize", 134}}}});
    }
    list.push_back({{"type", "file"}, {"oid", "5678"}, {"size", 12}, {"path", "README.md"}});  // in git, not LFS
    const size_t first = req.has_param("cursor") ? std::stoul(req.get_param_value("cursor")) : 0;
    const size_t end = page_size == 0 ? list.size() : std::min(list.size(), first + page_size);
    if (end < list.size()) {
      std::string link = "<";  // appended: g++ 12 warns falsely on "<" + a std::string (-Wrestrict)
      link += endpoint() + req.path + "?recursive=true&cursor=" + std::to_string(end) + ">; rel=\"next\"";
      res.set_header("Link", link);
    }
    res.set_content(nlohmann::json(list.begin() + first, list.begin() + end).dump(), "application/json");
  });
  hub_.Get(R"(/([^/]+/[^/]+)/resolve/main/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    hub_seen_.push_back({req.path, req.get_header_value("Authorization"), req.get_header_value("Range")});
    if (!readable(req, res, req.matches[1])) return;
    if (!find(req.matches[1], req.matches[2])) {
      res.status = 404;
      res.set_header("X-Error-Code", "EntryNotFound");
      return;
    }
    // Like the Hub's LFS files: a signed URL on another host.
    res.set_redirect("http://127.0.0.1:" + std::to_string(file_port_) + "/blobs/" + req.matches[1].str() + "/" +
                     req.matches[2].str() + "?X-Signature=abc");
  });
}

void FakeHub::route_file_host() {
  file_host_.Get(R"(/blobs/([^/]+/[^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    file_seen_.push_back({req.path, req.get_header_value("Authorization"), req.get_header_value("Range")});
    const FakeFile* file = find(req.matches[1], req.matches[2]);
    if (!file) {
      res.status = 404;
      return;
    }
    // Ranges are answered here, not by httplib (which would apply them to any answer): only
    // "bytes=N-", the form a resumed download sends.
    size_t start = 0;
    res.status = 200;  // set, or httplib makes it 206 for any request with a Range
    const std::string range = req.get_header_value("Range");
    if (!range.empty() && !ignore_range) {
      start = std::stoul(range.substr(range.find('=') + 1));
      res.status = 206;
      const std::string size = std::to_string(file->content.size());
      res.set_header("Content-Range",
                     "bytes " + std::to_string(start) + "-" + std::to_string(file->content.size() - 1) + "/" + size);
    }
    const std::string body = file->content.substr(start);
    const long drop = drop_after.exchange(-1);
    // A chunked provider: httplib sends exactly what it writes, and closes the connection when it returns false.
    res.set_chunked_content_provider("application/octet-stream", [body, drop](size_t offset, httplib::DataSink& sink) {
      const size_t end = drop >= 0 ? std::min(body.size(), static_cast<size_t>(drop)) : body.size();
      const size_t n = std::min<size_t>(64 * 1024, end - offset);
      if (n > 0) sink.write(body.data() + offset, n);
      if (offset + n < end) return true;
      if (end < body.size()) return false;  // the connection drops mid-file
      sink.done();
      return true;
    });
  });
}

}  // namespace nanoserve::test
