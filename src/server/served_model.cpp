#include "server/served_model.h"

#include <ctime>
#include <utility>

#include "engine/prompt.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::server {

ServedModel::ServedModel(std::unique_ptr<engine::Engine> engine)
    : engine_(std::move(engine)),
      chat_template_(engine::model_chat_template(engine_->chat_template(), engine_->tokenizer())),
      name_(engine_->model_name()),
      created_(static_cast<int64_t>(std::time(nullptr))) {}

ModelBounds ServedModel::bounds() const {
  return {.context_size = engine_->context_size(), .n_vocab = static_cast<int64_t>(engine_->tokenizer().n_tokens())};
}

}  // namespace nanoserve::server
