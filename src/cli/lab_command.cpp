// `nanoserve lab [EXPERIMENT...|all] -m MODEL.gguf`: prediction-first experiments (src/lab/,
// their files in experiments/).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "lab/lab.h"

namespace nanoserve::cli {

void add_lab_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("lab", "Prediction-first experiments: predict, measure, compare with first principles");
  auto o = std::make_shared<lab::LabOptions>();
  auto predictions = std::make_shared<std::vector<std::string>>();
  cmd->add_option("experiments", o->experiments, "Experiment ids, or all (none: list them)");
  cmd->add_option("-m,--model", o->model_path,
                  "GGUF model the experiments run (a file or a Hugging Face name, as serve's --model); with --url, "
                  "the file that server serves");
  cmd->add_option("--url", o->url, "Measure this running server instead of starting nanoserve serve");
  cmd->add_option("--api-key", o->api_key, "With --url: sent as 'Authorization: Bearer KEY'")->envname("NANOSERVE_API_KEY");
  cmd->add_option("--predict", *predictions,
                  "Your prediction, VALUE (every experiment) or EXPERIMENT=VALUE; repeatable (no question is asked)")
      ->allow_extra_args(false);  // one value each time: the experiments' ids may follow
  cmd->add_flag("--no-prompt", o->no_prompt, "Never ask for a prediction (without --predict, none is recorded)");
  cmd->add_option("--out", o->out_path, "JSONL file each experiment appends its row to")->capture_default_str();
  cmd->add_option("-t,--threads", o->threads, "Compute threads of the servers and the bandwidth measurement "
                                             "(default: physical cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--kv-type", o->kv_type, "KV cache type of the servers: f16 or q8_0")
      ->check(CLI::IsMember({"f16", "q8_0"}))->capture_default_str();
  cmd->add_option("--max-context", o->max_context,
                  "Cap every prompt and server context at this many tokens (quick runs; lengths scale alike)")
      ->check(CLI::Range(int64_t{64}, int64_t{1} << 30));
  cmd->add_option("--experiments", o->experiments_dir, "Read the experiment files from this folder instead of the "
                                                      "built-in ones (experiments/ of the source tree)");
  cmd->callback([o, predictions] {
    for (const std::string& p : *predictions) lab::add_prediction(*o, p);
    if (!o->model_path.empty()) o->model_path = model_file(o->model_path);
    const int status = lab::run_lab(*o, std::cin, std::cout, std::cerr);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace nanoserve::cli
