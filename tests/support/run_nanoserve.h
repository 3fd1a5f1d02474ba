// Runs the built nanoserve binary as a user would, for tests of its commands.
#pragma once

#include <string>

namespace nanoserve::test {

struct CommandResult {
  int status;       // exit status
  std::string out;  // stdout
  std::string err;  // stderr
};

// `nanoserve ARGS` through the shell (ARGS may quote), with `stdin_text` on its standard input.
CommandResult run_nanoserve(const std::string& args, const std::string& stdin_text = "");

}  // namespace nanoserve::test
