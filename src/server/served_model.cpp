#include "server/served_model.h"

#include "server/harmony_reader.h"

#include <fmt/format.h>

#include <ctime>
#include <span>
#include <stdexcept>
#include <utility>

#include "engine/grammar_vocabulary.h"
#include "engine/prompt.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::server {

ServedModel::ServedModel(std::unique_ptr<engine::Engine> engine, std::map<int32_t, float> logit_bias)
    : engine_(std::move(engine)),
      chat_template_(engine::model_chat_template(engine_->chat_template(), engine_->tokenizer())),
      name_(engine_->model_name()),
      created_(static_cast<int64_t>(std::time(nullptr))),
      // Built with the model (a walk of the whole vocabulary), so a schema request's first token does not wait for it.
      grammar_vocabulary_(engine::grammar_vocabulary(engine_->tokenizer())),
      thinks_(engine_->tokenizer().find_token("<think>") && engine_->tokenizer().find_token("</think>")),
      tool_syntax_(tool_syntax_of(engine_->chat_template())),
      harmony_(is_harmony_template(engine_->chat_template())),
      logit_bias_(std::move(logit_bias)) {
  const auto n_vocab = static_cast<int64_t>(engine_->tokenizer().n_tokens());
  for (const auto& [token, bias] : logit_bias_)
    if (token < 0 || token >= n_vocab)
      throw std::invalid_argument(fmt::format("--logit-bias: token {} is not in the vocabulary (0..{})", token,
                                              n_vocab - 1));
}

void ServedModel::add_server_bias(engine::GenerationRequest& request) const {
  for (const auto& [token, bias] : logit_bias_) request.logit_bias.try_emplace(token, bias);
}

bool ServedModel::opens_thinking(const std::vector<int32_t>& prompt) const {
  if (!thinks_ || prompt.empty()) return false;
  const size_t from = prompt.size() >= 3 ? prompt.size() - 3 : 0;
  std::string end = engine_->tokenizer().decode(std::span(prompt).subspan(from));
  while (!end.empty() && (end.back() == '\n' || end.back() == ' ')) end.pop_back();
  return end.ends_with("<think>");
}

ModelBounds ServedModel::bounds() const {
  return {.context_size = engine_->context_size(), .n_vocab = static_cast<int64_t>(engine_->tokenizer().n_tokens())};
}

void ServedModel::hold_to_grammar(engine::GenerationRequest& request,
                                  std::shared_ptr<const grammar::Grammar> grammar) const {
  if (!grammar) return;
  request.grammar = std::move(grammar);
  request.grammar_vocabulary = grammar_vocabulary_;
}

}  // namespace nanoserve::server
