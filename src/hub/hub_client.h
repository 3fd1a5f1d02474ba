// The Hugging Face Hub's HTTP API, the two calls a pull needs: a repo's file list
// (GET {endpoint}/api/models/{repo}/tree/main?recursive=true, page by page) and a file's bytes
// (GET {endpoint}/{repo}/resolve/main/{path}, which redirects to a file host). Every failure
// throws std::runtime_error with what to do about it.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "hub/repo_files.h"

namespace nanoserve::hub {

// Where the Hub is and how to talk to it, read from the variables Hugging Face's own tools read.
struct HubConfig {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT (a mirror, or a test's server)
  std::string token;                                // HF_TOKEN: sent as "Authorization: Bearer"
  bool offline = false;                             // HF_HUB_OFFLINE=1: never connect
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds read_timeout{60};  // between two reads of one answer

  static HubConfig from_environment();
};

std::vector<RepoFile> list_repo_files(const HubConfig& hub, const std::string& repo);

// Appends `file`'s bytes to `part` from its current size on (a Range request; a server that
// answers with the whole file starts it over), with progress on stderr. Returns when the server
// sent the rest; when the transfer fails, `part` keeps what arrived and the message says that
// pulling again resumes.
void download_file(const HubConfig& hub, const std::string& repo, const RepoFile& file,
                   const std::filesystem::path& part);

}  // namespace nanoserve::hub
