// `nanoserve template`: messages → prompt text with a model's chat template, rendered the
// way the server renders it. Reads JSON lines
//   {"messages": [...], "tools": [...], "add_generation_prompt": true, "extra": {...}}
// (only "messages" is required) and prints each prompt as one JSON string per line. Stops
// at the first bad line with an error naming its line number.
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "engine/model_metadata.h"
#include "engine/prompt.h"
#include "gguf/file.h"
#include "template/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::cli {
namespace {

struct TemplateArgs {
  std::string model;
  std::string template_file;
  std::string bos;
  std::string eos;
};

std::string read_template_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read template file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model's chat template by the rule the server follows (engine::model_chat_template).
templates::ChatTemplate load_from_gguf(const std::string& path) {
  const gguf::File file = gguf::File::open(path);
  return engine::model_chat_template(engine::chat_template(file.metadata()),
                                     tokenizer::Tokenizer::from_gguf(file.metadata()));
}

templates::ChatTemplateInputs parse_inputs(const std::string& line) {
  const auto in = nlohmann::ordered_json::parse(line);
  if (!in.is_object()) throw std::invalid_argument("expected a JSON object");
  templates::ChatTemplateInputs inputs;
  for (const auto& [key, value] : in.items()) {
    if (key == "messages") {
      if (!value.is_array()) throw std::invalid_argument("\"messages\" must be an array");
      inputs.messages = value;
    } else if (key == "tools") {
      inputs.tools = value;
    } else if (key == "add_generation_prompt") {
      if (!value.is_boolean()) throw std::invalid_argument("\"add_generation_prompt\" must be true or false");
      inputs.add_generation_prompt = value.get<bool>();
    } else if (key == "extra") {
      if (!value.is_object()) throw std::invalid_argument("\"extra\" must be an object");
      inputs.extra = value;
    } else {
      throw std::invalid_argument("unknown key \"" + key + "\"");
    }
  }
  if (!in.contains("messages")) throw std::invalid_argument("missing \"messages\"");
  return inputs;
}

void run_template(const TemplateArgs& a) {
  const templates::ChatTemplate chat_template = a.template_file.empty()
                                                    ? load_from_gguf(model_file(a.model))
                                                    : templates::ChatTemplate(read_template_file(a.template_file),
                                                                              a.bos, a.eos);
  std::string line;
  for (size_t line_no = 1; std::getline(std::cin, line); ++line_no) {
    if (line.empty()) continue;
    std::string prompt;
    try {
      prompt = chat_template.render(parse_inputs(line));
    } catch (const std::exception& e) {
      throw std::runtime_error("input line " + std::to_string(line_no) + ": " + e.what());
    }
    std::cout << nlohmann::json(prompt).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

}  // namespace

void add_template_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "template", "Render chat prompts: JSON lines {\"messages\": [...], ...} on stdin, one JSON string out each");
  auto a = std::make_shared<TemplateArgs>();
  auto* model = cmd->add_option("-m,--model", a->model, "GGUF model (file or Hugging Face name) whose tokenizer.chat_template to use");
  auto* file = cmd->add_option("--template", a->template_file, "Jinja template file instead of a model's");
  model->excludes(file);
  cmd->add_option("--bos", a->bos, "Text of the BOS token (the template's bos_token)")->needs(file);
  cmd->add_option("--eos", a->eos, "Text of the EOS token (the template's eos_token)")->needs(file);
  cmd->callback([a] {
    if (a->model.empty() && a->template_file.empty()) throw CLI::ValidationError("template", "give --model or --template");
    run_template(*a);
  });
}

}  // namespace nanoserve::cli
