#include <iostream>
#include <string>

#include "cli/commands.h"

namespace nanoserve::cli {

// The HTTP server arrives with the server issue; until then `serve` says what it would do.
void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve the OpenAI-compatible HTTP API (not built yet)");
  auto model = std::make_shared<std::string>();
  cmd->add_option("-m,--model", *model, "GGUF model to serve")->envname("NANOSERVE_MODEL");
  cmd->callback([model] {
    std::cerr << "nanoserve serve: the HTTP server is not part of this build yet.\n"
              << "It would serve " << (model->empty() ? std::string("a small synthesized qwen3 model") : *model)
              << " on http://127.0.0.1:8080 (/v1/chat/completions, /v1/completions, /v1/models, /health, /metrics).\n"
              << "Try `nanoserve info MODEL.gguf` or `nanoserve tokenize --model MODEL.gguf --text \"hello\"`.\n";
    throw CLI::RuntimeError(2);
  });
}

}  // namespace nanoserve::cli
