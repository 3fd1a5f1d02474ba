// `nanoserve tokenize`: text → token ids, with the tokenizer of a GGUF model or a
// Hugging Face tokenizer.json. Reads JSON lines {"text": ...} and answers one
// {"ids": [...]} line each (or {"error": ...} for a bad line, keeping lines paired).
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "gguf/file.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::cli {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string tokenizer_json;
  std::optional<std::string> text;
  bool no_special = false;
  bool add_bos = false;
};

tokenizer::Tokenizer load(const TokenizeArgs& a) {
  if (!a.model.empty()) return tokenizer::Tokenizer::from_gguf(gguf::File::open(model_file(a.model)).metadata());
  return tokenizer::Tokenizer::from_hf_file(a.tokenizer_json);
}

nlohmann::json ids_json(const tokenizer::Tokenizer& tok, const TokenizeArgs& a, const std::string& text) {
  std::vector<int32_t> ids;
  if (a.add_bos && tok.bos_id()) ids.push_back(*tok.bos_id());
  auto encoded = tok.encode(text, !a.no_special);
  ids.insert(ids.end(), encoded.begin(), encoded.end());
  return {{"ids", ids}};
}

void run_tokenize(const TokenizeArgs& a) {
  const tokenizer::Tokenizer tok = load(a);
  if (a.text) {
    std::cout << ids_json(tok, a, *a.text).dump() << "\n";
    return;
  }
  std::string line;
  size_t line_no = 0, errors = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json out;
    try {
      nlohmann::json in = nlohmann::json::parse(line);
      if (!in.is_object() || !in.contains("text") || !in["text"].is_string())
        throw std::invalid_argument("expected an object with a string \"text\"");
      out = ids_json(tok, a, in["text"].get<std::string>());
    } catch (const std::exception& e) {
      out = {{"error", "line " + std::to_string(line_no) + ": " + e.what()}};
      ++errors;
    }
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (errors) throw std::runtime_error(std::to_string(errors) + " input line(s) could not be tokenized");
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Text to token ids: JSON lines {\"text\": ...} on stdin, {\"ids\": [...]} out");
  auto a = std::make_shared<TokenizeArgs>();
  auto* model = cmd->add_option("-m,--model", a->model, "GGUF model (file or Hugging Face name) whose tokenizer to use");
  auto* json = cmd->add_option("--tokenizer", a->tokenizer_json, "Hugging Face tokenizer.json");
  model->excludes(json);
  cmd->add_option("--text", a->text, "Tokenize this one string instead of reading stdin");
  cmd->add_flag("--no-special", a->no_special, "Treat special tokens written in the text as plain text");
  cmd->add_flag("--bos", a->add_bos, "Put the BOS token first (when the tokenizer has one)");
  cmd->callback([a] {
    if (a->model.empty() && a->tokenizer_json.empty()) throw CLI::ValidationError("tokenize", "give --model or --tokenizer");
    run_tokenize(*a);
  });
}

}  // namespace nanoserve::cli
