// The model the server answers with: the loaded engine, its chat template and the facts
// the routes report (name, creation time, context and vocabulary sizes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "grammar/vocabulary.h"
#include "server/generation_request.h"
#include "server/tool_calls.h"
#include "template/chat_template.h"

namespace nanoserve::server {

class ServedModel {
 public:
  // The chat template is engine::model_chat_template's: the model's own, else ChatML.
  // `logit_bias`: added to every request's own (which wins for the same token), as
  // llama-server's --logit-bias; throws std::invalid_argument for a token outside the vocabulary.
  explicit ServedModel(std::unique_ptr<engine::Engine> engine, std::map<int32_t, float> logit_bias = {});

  engine::Engine& engine() const { return *engine_; }
  const templates::ChatTemplate& chat_template() const { return chat_template_; }
  const std::string& name() const { return name_; }
  int64_t created() const { return created_; }  // Unix seconds when it was loaded
  ModelBounds bounds() const;
  // The model thinks aloud: its vocabulary has the tokens <think> and </think> (Qwen3,
  // DeepSeek-R1): chat answers split the thinking into reasoning_content.
  bool thinks() const { return thinks_; }
  // How the model's chat template has it write tool calls.
  ToolSyntax tool_syntax() const { return tool_syntax_; }
  // The template speaks gpt-oss's harmony (harmony_reader.h reads its answers).
  bool harmony() const { return harmony_; }
  // The rendered prompt ends inside a thought (the template opened <think>): the output starts
  // with reasoning.
  bool opens_thinking(const std::vector<int32_t>& prompt) const;
  // Holds `request` to `grammar` (nothing when it is null).
  void hold_to_grammar(engine::GenerationRequest& request, std::shared_ptr<const grammar::Grammar> grammar) const;
  // Adds the server's logit bias to the request's.
  void add_server_bias(engine::GenerationRequest& request) const;

 private:
  std::unique_ptr<engine::Engine> engine_;
  templates::ChatTemplate chat_template_;
  std::string name_;
  int64_t created_;
  std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary_;
  bool thinks_;
  ToolSyntax tool_syntax_;
  bool harmony_;
  std::map<int32_t, float> logit_bias_;  // what grammars mask (response_format)
};

}  // namespace nanoserve::server
