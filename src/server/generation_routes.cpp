#include <utility>

#include "server/chat_request.h"
#include "server/completion_request.h"
#include "server/generation_request.h"
#include "server/generation_response.h"
#include "server/http_errors.h"
#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/logprobs_json.h"
#include "server/prompt_tokens.h"
#include "server/request_id.h"
#include "server/request_log.h"
#include "server/routes.h"

namespace nanoserve::server {
namespace {

const ResponseShape kChatShape{
    .chunk_object = "chat.completion.chunk",
    .opens_with_role = true,
    .whole = chat_completion,
    .text_chunk = [](const ResponseHeader& header, const std::string& text) {
      return chat_chunk(header, {{"content", text}});
    },
    .finish_chunk = chat_finish_chunk,
    .logprobs = chat_logprobs_json,
};

const ResponseShape kCompletionShape{
    .chunk_object = "text_completion",
    .opens_with_role = false,
    .whole = text_completion,
    .text_chunk = text_chunk,
    .finish_chunk = text_finish_chunk,
    .logprobs = completion_logprobs_json,
};

void chat_completions(const http::Request& req, http::ResponseWriter& res, ServerState& state) {
  auto model = state.loaded_model();
  const auto body = parse_json_body(req.body, state.limits().max_json_depth);
  const ChatRequest chat = parse_chat_request(body, state.limits(), random_seed());
  auto prompt = chat_prompt_tokens(model->chat_template(), model->engine().tokenizer(), chat);
  std::optional<ReasoningSplit> reasoning;
  if (model->thinks() && !chat.reasoning_inline) reasoning.emplace(model->opens_thinking(prompt));
  std::optional<ToolCallReader> tool_calls;
  if (!chat.tools.is_null()) tool_calls.emplace(model->tool_syntax(), chat.parallel_tool_calls);
  std::shared_ptr<const grammar::Grammar> grammar = chat.params.grammar;
  if (chat.tool_choice.kind == ToolChoice::Kind::Required || chat.tool_choice.kind == ToolChoice::Kind::Function) {
    if (grammar)
      throw invalid_request("a 'tool_choice' that forces a call cannot be combined with 'response_format'",
                            "tool_choice", "unsupported_combination");
    grammar = forced_tool_call_grammar(chat.tools, chat.tool_choice, model->tool_syntax(), chat.parallel_tool_calls);
  }
  std::string id = random_request_id("chatcmpl-");
  this_thread_request_log().id = id;
  auto request =
      make_generation_request(std::move(id), std::move(prompt), chat.params, model->bounds(), state.limits(), "messages");
  model->hold_to_grammar(request, std::move(grammar));
  respond_with_generation(res, state, std::move(model), std::move(request), chat.params, kChatShape,
                          {.reasoning = std::move(reasoning), .tool_calls = std::move(tool_calls)});
}

void completions(const http::Request& req, http::ResponseWriter& res, ServerState& state) {
  auto model = state.loaded_model();
  const auto body = parse_json_body(req.body, state.limits().max_json_depth);
  const CompletionRequest completion = parse_completion_request(body, state.limits(), random_seed());
  auto prompt = completion_prompt_tokens(model->engine().tokenizer(), completion);
  std::string id = random_request_id("cmpl-");
  this_thread_request_log().id = id;
  auto request = make_generation_request(std::move(id), std::move(prompt), completion.params, model->bounds(),
                                         state.limits(), "prompt");
  model->hold_to_grammar(request, completion.params.grammar);
  respond_with_generation(res, state, std::move(model), std::move(request), completion.params, kCompletionShape);
}

}  // namespace

std::vector<http::Route> generation_routes(ServerState& state) {
  using http::Request;
  using http::ResponseWriter;
  return {
      {.method = "POST", .path = "/v1/chat/completions",
       .handler = with_api_errors([&state](const Request& req, ResponseWriter& res) { chat_completions(req, res, state); }),
       .on_event_loop = false},
      {.method = "POST", .path = "/v1/completions",
       .handler = with_api_errors([&state](const Request& req, ResponseWriter& res) { completions(req, res, state); }),
       .on_event_loop = false},
  };
}

}  // namespace nanoserve::server
