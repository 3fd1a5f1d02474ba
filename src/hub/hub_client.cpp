#include "hub/hub_client.h"

#include <fcntl.h>
#include <sys/file.h>
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "hub/download_progress.h"
#include "hub/url.h"

namespace nanoserve::hub {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxRedirects = 5;
constexpr int kMaxPages = 100;
constexpr size_t kMaxErrorBody = 64 * 1024;

// HF_HUB_OFFLINE's true values, as huggingface_hub reads them.
bool is_true(const char* value) {
  if (!value) return false;
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::toupper(c); });
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

struct Answer {
  httplib::Error error = httplib::Error::Success;
  int status = 0;
  httplib::Headers headers;
  std::string body;  // of an answer that is not the content asked for (an error's text, a redirect's)
};

// One GET of `url`. A 200 or 206 answer goes to `on_content` (which may refuse it) and its body
// to `receive`; any other answer's body (its first 64 KB) to Answer::body.
Answer get(const HubConfig& hub, const Url& url, const httplib::Headers& headers,
           const std::function<bool(const httplib::Response&)>& on_content,
           const std::function<bool(const char*, size_t)>& receive) {
  if (hub.offline) throw std::runtime_error("HF_HUB_OFFLINE is set: not connecting to " + url.origin);
  httplib::Client client(url.origin);
  client.set_connection_timeout(hub.connect_timeout);
  client.set_read_timeout(hub.read_timeout);
  client.set_follow_location(false);  // followed by the caller: the token must not go to another host
  Answer answer;
  bool content = false;
  const httplib::Result result = client.Get(
      url.path, headers,
      [&](const httplib::Response& r) {
        answer.status = r.status;
        answer.headers = r.headers;
        content = r.status == 200 || r.status == 206;
        return !content || on_content(r);
      },
      [&](const char* data, size_t n) {
        if (content) return receive(data, n);
        answer.body.append(data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, answer.body.size())));
        return true;
      });
  answer.error = result.error();
  return answer;
}

std::string header(const Answer& a, const std::string& name) {
  const auto it = a.headers.find(name);
  return it == a.headers.end() ? "" : it->second;
}

std::string transport_failure(const Url& url, httplib::Error error) {
  std::string why;
  switch (error) {
    case httplib::Error::Connection:
      why = "could not connect (no network, a DNS failure, or a wrong HF_ENDPOINT)";
      break;
    case httplib::Error::ConnectionTimeout: why = "the connection timed out (no network?)"; break;
    case httplib::Error::SSLConnection: why = "the TLS handshake failed"; break;
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      why = "its TLS certificate could not be verified (are CA certificates installed? Debian: ca-certificates)";
      break;
    case httplib::Error::Read: why = "the connection dropped before the answer ended"; break;
    default: why = httplib::to_string(error);
  }
  return fmt::format("cannot reach {}: {}. A local file works without the Hub (--model PATH.gguf), and so do "
                     "models pulled before (nanoserve list)",
                     url.origin, why);
}

// The message for an HTTP answer that refused: what to do about it.
std::string refusal(const Answer& a, const HubConfig& hub, const std::string& repo, const std::string& what,
                    const std::string& not_found) {
  const std::string code = header(a, "X-Error-Code");
  const std::string token = hub.token.empty() ? "HF_TOKEN is not set" : "an HF_TOKEN was sent";
  // The Hub answers 401 RepoNotFound for a repo that does not exist, so as not to tell private ones apart.
  if (code == "RepoNotFound")
    return fmt::format("no model repo {} on {} (HTTP {}): check the name. A private repo is reported the same "
                       "way: to pull one, set HF_TOKEN to a token that can read it ({})",
                       repo, hub.endpoint, a.status, token);
  if (code == "GatedRepo" || a.status == 401 || a.status == 403)
    return fmt::format("{} is gated or private: {} was refused (HTTP {}). Set HF_TOKEN to an access token of an "
                       "account that may read it (for a gated repo, accept its terms at {}/{} first); {}",
                       repo, what, a.status, hub.endpoint, repo, token);
  if (a.status == 404) return fmt::format("{} (HTTP 404)", not_found);
  std::string text = a.body.substr(0, 300);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return fmt::format("{}: HTTP {} from the Hub{}{}", what, a.status, text.empty() ? "" : ": ", text);
}

// Only the Hub gets the token: the hosts it redirects to are other parties.
void add_token(httplib::Headers& headers, const HubConfig& hub, const Url& url) {
  if (!hub.token.empty() && url.origin == parse_url(hub.endpoint).origin)
    headers.emplace("Authorization", "Bearer " + hub.token);
}

// The URL of the next page from a Link header (RFC 8288: <URL>; rel="next", ...), or "".
std::string next_page(const std::string& link) {
  for (size_t begin = 0; begin < link.size();) {
    const size_t end = std::min(link.find(',', begin), link.size());
    const std::string entry = link.substr(begin, end - begin);
    const size_t open = entry.find('<'), close = entry.find('>');
    if (entry.find("rel=\"next\"") != std::string::npos && open != std::string::npos && close > open)
      return entry.substr(open + 1, close - open - 1);
    begin = end + 1;
  }
  return "";
}

std::vector<RepoFile> parse_file_list(const std::string& body, const std::string& repo) {
  const nlohmann::json list = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) throw std::runtime_error("the Hub's list of " + repo + "'s files is not a JSON array");
  std::vector<RepoFile> files;
  for (const nlohmann::json& entry : list) {
    if (!entry.is_object() || entry.value("type", "") != "file") continue;
    if (!entry.contains("path") || !entry["path"].is_string() || !entry.contains("size") ||
        !entry["size"].is_number_unsigned())
      throw std::runtime_error("an entry of the Hub's list of " + repo + "'s files lacks its path or size: " +
                               entry.dump());
    RepoFile f{entry["path"], entry["size"], ""};
    if (const auto lfs = entry.find("lfs"); lfs != entry.end() && lfs->is_object() && lfs->contains("oid") &&
                                            (*lfs)["oid"].is_string())
      f.sha256 = (*lfs)["oid"];
    files.push_back(std::move(f));
  }
  return files;
}

// A file descriptor closed when it leaves scope.
struct OpenFile {
  int fd;
  ~OpenFile() { ::close(fd); }
};

bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t written = ::write(fd, data, n);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data += written;
    n -= static_cast<size_t>(written);
  }
  return true;
}

// A regular file's size; 0 for anything else (none there, or a device).
uint64_t size_on_disk(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
}

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

HubConfig HubConfig::from_environment() {
  HubConfig hub;
  if (const char* endpoint = std::getenv("HF_ENDPOINT"); endpoint && *endpoint) hub.endpoint = endpoint;
  while (hub.endpoint.size() > 1 && hub.endpoint.back() == '/') hub.endpoint.pop_back();
  parse_url(hub.endpoint);  // a bad HF_ENDPOINT is said at once
  if (const char* token = std::getenv("HF_TOKEN")) hub.token = token;
  hub.offline = is_true(std::getenv("HF_HUB_OFFLINE"));
  return hub;
}

std::vector<RepoFile> list_repo_files(const HubConfig& hub, const std::string& repo) {
  Url url = parse_url(hub.endpoint + "/api/models/" + repo + "/tree/main?recursive=true");
  std::vector<RepoFile> files;
  // A long list comes in pages, each naming the next in its Link header.
  for (int page = 1;; ++page) {
    httplib::Headers headers;
    add_token(headers, hub, url);
    std::string body;
    const Answer a = get(hub, url, headers, [](const httplib::Response&) { return true; },
                         [&](const char* data, size_t n) {
                           body.append(data, n);
                           return true;
                         });
    if (a.error != httplib::Error::Success) throw std::runtime_error(transport_failure(url, a.error));
    if (a.status != 200)
      throw std::runtime_error(
          refusal(a, hub, repo, "listing its files", "no model repo " + repo + " on " + hub.endpoint));
    const std::vector<RepoFile> listed = parse_file_list(body, repo);
    files.insert(files.end(), listed.begin(), listed.end());
    const std::string next = next_page(header(a, "Link"));
    if (next.empty()) return files;
    if (page == kMaxPages) throw std::runtime_error("the Hub's list of " + repo + "'s files goes on past 100 pages");
    url = follow_location(url, next);
  }
}

void download_file(const HubConfig& hub, const std::string& repo, const RepoFile& file, const fs::path& part) {
  uint64_t have = size_on_disk(part);
  OpenFile out{::open(part.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
  if (out.fd < 0) throw std::runtime_error("cannot write " + part.string() + ": " + std::strerror(errno));
  // Two processes appending to one part would interleave their bytes.
  if (::flock(out.fd, LOCK_EX | LOCK_NB) != 0)
    throw std::runtime_error("another process is downloading " + part.string() + "; let it finish, or pull again");
  if (have >= file.size && ::ftruncate(out.fd, 0) == 0) have = 0;  // more than the file (or all of it, unchecked)

  Url url = parse_url(hub.endpoint + "/" + repo + "/resolve/main/" + escape_path(file.path));
  const std::string kept = fmt::format("what arrived is kept in {}: pull again to resume", part.string());
  for (int hops = 0;; ++hops) {
    httplib::Headers headers = {{"Accept-Encoding", "identity"}};  // the bytes as stored: sizes and ranges count them
    if (have > 0) headers.emplace("Range", fmt::format("bytes={}-", have));
    add_token(headers, hub, url);
    std::optional<DownloadProgress> progress;
    std::string failure;
    const Answer a = get(
        hub, url, headers,
        [&](const httplib::Response& r) {
          if (r.status == 200 && have > 0 && ::ftruncate(out.fd, 0) == 0) have = 0;  // Range ignored: from the start
          if (r.status == 206 && r.get_header_value("Content-Range").rfind(fmt::format("bytes {}-", have), 0) != 0) {
            failure = "the file host answered another range than asked (" + r.get_header_value("Content-Range") + ")";
            return false;
          }
          progress.emplace(file.path, file.size, have);
          return true;
        },
        [&](const char* data, size_t n) {
          if (!write_all(out.fd, data, n)) {
            failure = fmt::format("writing {} failed: {}", part.string(), std::strerror(errno));
            return false;
          }
          have += n;
          progress->update(have);
          return true;
        });
    if (!failure.empty()) throw std::runtime_error(fmt::format("{}; {}", failure, kept));
    if (a.error == httplib::Error::Read && have > 0)
      throw std::runtime_error(fmt::format("the connection to {} dropped after {} of {}'s {}; {}", url.origin,
                                           human_bytes(have), file.path, human_bytes(file.size), kept));
    if (a.error != httplib::Error::Success) throw std::runtime_error(transport_failure(url, a.error));
    if (is_redirect(a.status)) {
      if (hops == kMaxRedirects) throw std::runtime_error("the Hub redirected " + file.path + " too many times");
      url = follow_location(url, header(a, "Location"));
      continue;
    }
    if (a.status != 200 && a.status != 206)
      throw std::runtime_error(refusal(a, hub, repo, "downloading " + file.path, repo + " has no file " + file.path));
    if (have != file.size)
      throw std::runtime_error(fmt::format("the download of {} ended after {} of {}; {}", file.path, human_bytes(have),
                                           human_bytes(file.size), kept));
    progress->finish(have);
    return;
  }
}

}  // namespace nanoserve::hub
