// `nanoserve logits -m MODEL.gguf --ids 1,2,3 [--all]`: the model's logits for a token
// sequence, as one JSON object {"n_vocab": V, "logits": [[...], ...]}, for checking the
// forward pass against a reference. The context size is run's and serve's (-c): a model's
// positions can depend on it (Phi-3's LongRoPE takes its long factors past the original context,
// as llama.cpp does by its n_ctx), so a comparison names the reference's.
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/kv_type_option.h"
#include "cli/model_argument.h"
#include "engine/defaults.h"
#include "model/model.h"

namespace nanoserve::cli {
namespace {

struct LogitsArgs {
  std::string model;
  std::vector<int32_t> ids;
  bool all = false;
  int threads = 0;
  int64_t context_size = 0;
  std::string kv_type;
};

void run_logits(const LogitsArgs& a) {
  model::Model m(model_file(a.model), {.threads = a.threads, .kv_type = model::parse_optional_kv_type(a.kv_type)});
  const int64_t n = static_cast<int64_t>(a.ids.size());
  const int64_t context = m.set_context(engine::context_size_for(a.context_size, m.config().n_ctx_train));
  if (n > context)
    throw std::invalid_argument(std::to_string(n) + " ids do not fit a context of " + std::to_string(context) +
                                " positions (-c)");
  model::KvCache cache(m.config(), n);
  model::Batch batch;
  for (int64_t p = 0; p < n; ++p) batch.add(0, p, a.ids[p], a.all || p == n - 1);
  model::Logits logits;
  m.forward(batch, cache, logits);
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < logits.batch_rows.size(); ++i) rows.push_back(logits.row(i));
  std::cout << nlohmann::json{{"n_vocab", logits.n_vocab}, {"logits", rows}}.dump() << "\n";
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Logits of a token sequence as JSON (last position, or all with --all)");
  auto a = std::make_shared<LogitsArgs>();
  cmd->add_option("-m,--model", a->model, "GGUF file, or a Hugging Face name (as serve's --model)")->required();
  cmd->add_option("--ids", a->ids, "Token ids, comma-separated")->required()->delimiter(',');
  cmd->add_flag("--all", a->all, "One row per input position instead of the last one only");
  cmd->add_option("-t,--threads", a->threads, "Threads (default: physical cores)");
  cmd->add_option("-c,--ctx", a->context_size,
                  "Context size in tokens, as run's and serve's (default: the trained one, at most 4096)")
      ->check(CLI::PositiveNumber);
  add_kv_type_option(cmd, a->kv_type);
  cmd->callback([a] { run_logits(*a); });
}

}  // namespace nanoserve::cli
