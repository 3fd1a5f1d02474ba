// nanoserve: one binary, one subcommand per job.
#include <exception>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"nanoserve: a native C++ LLM inference server"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nanoserve 0.1");
  nanoserve::cli::add_serve_command(app);
  nanoserve::cli::add_info_command(app);
  nanoserve::cli::add_tokenize_command(app);
  nanoserve::cli::add_synth_command(app);
  nanoserve::cli::add_logits_command(app);
  nanoserve::cli::add_run_command(app);
  nanoserve::cli::add_bench_engine_command(app);
  nanoserve::cli::add_bench_kv_command(app);
  nanoserve::cli::add_bench_command(app);
  nanoserve::cli::add_template_command(app);
  nanoserve::cli::add_pull_commands(app);
  nanoserve::cli::add_lab_command(app);
  try {
    nanoserve::cli::limit_simd_from_environment();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "nanoserve: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
