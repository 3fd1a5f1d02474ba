// An imitation of the Hugging Face Hub on 127.0.0.1, for tests without network: the file list
// (/api/models/OWNER/REPO/tree/main), the resolve URL that redirects to a file host on another
// port, and the file host, which answers Range requests. Switches make it misbehave the ways the
// real ones can; it records what the client sent.
#pragma once

#include <httplib.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hub/hub_client.h"

namespace nanoserve::test {

struct FakeFile {
  std::string path;
  std::string content;
  std::string stated_sha256{};  // what the list says; "" = the content's true SHA-256
};

struct FakeRepo {
  std::vector<FakeFile> files;
  bool is_private = false;  // only the token kFakeToken may read it
};

inline constexpr const char* kFakeToken = "hf_test_token";

class FakeHub {
 public:
  FakeHub();
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  void add_repo(const std::string& name, FakeRepo repo);
  std::string endpoint() const;  // http://127.0.0.1:PORT
  hub::HubConfig config(const std::string& token = "") const;

  // The next file answer stops (the connection closed) after this many bytes; once.
  std::atomic<long> drop_after{-1};
  // The file host answers every request with the whole file (200), Range or not.
  std::atomic<bool> ignore_range{false};
  // Entries per page of a file list (0: all in one), the next page named in a Link header.
  std::atomic<size_t> page_size{0};

  struct Seen {
    std::string path, authorization, range;
  };
  std::vector<Seen> hub_requests() const;
  std::vector<Seen> file_requests() const;

 private:
  void route_hub();
  void route_file_host();
  const FakeFile* find(const std::string& repo, const std::string& path) const;
  // The repo when the request may read it; else answers the refusal and returns null.
  const FakeRepo* readable(const httplib::Request& req, httplib::Response& res, const std::string& repo) const;

  mutable std::mutex mutex_;
  std::map<std::string, FakeRepo> repos_;
  std::vector<Seen> hub_seen_, file_seen_;
  httplib::Server hub_, file_host_;
  int hub_port_ = 0, file_port_ = 0;
  std::thread hub_thread_, file_thread_;
};

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(const std::string& bytes);

}  // namespace nanoserve::test
