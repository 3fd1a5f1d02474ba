// SHA-256 of a file, as the Hub states it for a file stored with LFS.
#pragma once

#include <filesystem>
#include <string>

namespace nanoserve::hub {

// Lower-case hex. Throws std::runtime_error naming the file when it cannot be read.
std::string sha256_of_file(const std::filesystem::path& path);

}  // namespace nanoserve::hub
