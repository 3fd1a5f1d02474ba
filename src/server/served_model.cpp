#include "server/served_model.h"

#include <fmt/format.h>

#include <ctime>
#include <optional>
#include <utility>

#include "tokenizer/tokenizer.h"

namespace nanoserve::server {
namespace {

std::string token_text(const tokenizer::Tokenizer& tokenizer, std::optional<int32_t> id) {
  return id ? std::string(tokenizer.token_piece(*id)) : std::string();
}

templates::ChatTemplate model_chat_template(const engine::Engine& engine) {
  const std::string source = engine.chat_template();
  if (source.empty()) {
    fmt::print(stderr, "nanoserve: the model has no chat template; chat requests use ChatML\n");
    return templates::ChatTemplate::chatml();
  }
  const tokenizer::Tokenizer& tok = engine.tokenizer();
  try {
    return templates::ChatTemplate(source, token_text(tok, tok.bos_id()), token_text(tok, tok.eos_id()));
  } catch (const templates::ChatTemplateError& e) {
    fmt::print(stderr, "nanoserve: cannot read the model's chat template ({}); chat requests use ChatML\n", e.what());
    return templates::ChatTemplate::chatml();
  }
}

}  // namespace

ServedModel::ServedModel(std::unique_ptr<engine::Engine> engine)
    : engine_(std::move(engine)),
      chat_template_(model_chat_template(*engine_)),
      name_(engine_->model_name()),
      created_(static_cast<int64_t>(std::time(nullptr))) {}

ModelBounds ServedModel::bounds() const {
  return {.context_size = engine_->context_size(), .n_vocab = static_cast<int64_t>(engine_->tokenizer().n_tokens())};
}

}  // namespace nanoserve::server
