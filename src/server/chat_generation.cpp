#include "server/chat_generation.h"

#include <memory>
#include <utility>

#include "server/api_error.h"
#include "server/generation_request.h"
#include "server/harmony_tool_grammar.h"
#include "server/prompt_tokens.h"

namespace nanoserve::server {

ChatGeneration prepare_chat_generation(const ServedModel& model, const ChatRequest& chat, std::string id,
                                       const ServerLimits& limits) {
  auto prompt = chat_prompt_tokens(model.chat_template(), model.engine().tokenizer(), chat);
  ChatReaders readers;
  const bool forces_call =
      chat.tool_choice.kind == ToolChoice::Kind::Required || chat.tool_choice.kind == ToolChoice::Kind::Function;
  if (model.harmony()) {
    readers.harmony.emplace(chat.parallel_tool_calls);
  } else {
    if (model.thinks() && !chat.reasoning_inline) readers.reasoning.emplace(model.opens_thinking(prompt));
    if (!chat.tools.is_null()) readers.tool_calls.emplace(model.tool_syntax(), chat.parallel_tool_calls);
  }
  std::shared_ptr<const grammar::Grammar> grammar = chat.params.grammar;
  if (forces_call) {
    if (grammar)
      throw invalid_request("a 'tool_choice' that forces a call cannot be combined with 'response_format'",
                            "tool_choice", "unsupported_combination");
    grammar = model.harmony() ? forced_harmony_call_grammar(chat.tools, chat.tool_choice)
                              : forced_tool_call_grammar(chat.tools, chat.tool_choice, model.tool_syntax(),
                                                         chat.parallel_tool_calls);
  }
  ChatGeneration out{
      .request = make_generation_request(std::move(id), std::move(prompt), chat.params, model.bounds(), limits,
                                         "messages"),
      .readers = std::move(readers)};
  model.hold_to_grammar(out.request, std::move(grammar));
  model.add_server_bias(out.request);
  return out;
}

engine::GenerationRequest prepare_text_generation(const ServedModel& model, std::vector<int32_t> prompt,
                                                  const GenerationParams& params, std::string id,
                                                  const ServerLimits& limits, const std::string& prompt_param) {
  engine::GenerationRequest request =
      make_generation_request(std::move(id), std::move(prompt), params, model.bounds(), limits, prompt_param);
  model.hold_to_grammar(request, params.grammar);
  model.add_server_bias(request);
  return request;
}

}  // namespace nanoserve::server
