// The --kv-type flag, the same on every command that makes a KV cache (serve, run, bench-engine,
// logits).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nanoserve::cli {

inline void add_kv_type_option(CLI::App* cmd, std::string& kv_type) {
  cmd->add_option("--kv-type", kv_type,
                  "How the KV cache stores keys and values: f16, or q8_0 (half the memory and half the bytes "
                  "read per token at long contexts, within llama.cpp's q8_0 cache's accuracy) (default: "
                  "NANOSERVE_KV_TYPE, else f16)")
      ->check(CLI::IsMember({"f16", "q8_0"}));
}

}  // namespace nanoserve::cli
