// Subcommands of the nanoserve binary. Each add_* registers its subcommand, flags and
// action on the app; main.cpp only wires them together.
#pragma once

#include <CLI/CLI.hpp>

namespace nanoserve::cli {

void add_info_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_logits_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_bench_engine_command(CLI::App& app);
// bench-kv: a q8_0 KV cache against an F16 one, side by side in one process.
void add_bench_kv_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_template_command(CLI::App& app);
// pull, list and rm: models from the Hugging Face Hub in the cache.
void add_pull_commands(CLI::App& app);
// lab: prediction-first experiments (src/lab/).
void add_lab_command(CLI::App& app);

// NANOSERVE_SIMD (kernels/simd_target.h), applied before any command runs. Throws
// std::invalid_argument for a target this CPU does not run.
void limit_simd_from_environment();

}  // namespace nanoserve::cli
