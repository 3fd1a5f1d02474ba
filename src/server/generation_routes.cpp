#include <utility>

#include "server/chat_generation.h"
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
  std::string id = random_request_id("chatcmpl-");
  this_thread_request_log().id = id;
  ChatGeneration generation = prepare_chat_generation(*model, chat, std::move(id), state.limits());
  respond_with_generation(res, state, std::move(model), std::move(generation.request), chat.params, kChatShape,
                          std::move(generation.readers));
}

void completions(const http::Request& req, http::ResponseWriter& res, ServerState& state) {
  auto model = state.loaded_model();
  const auto body = parse_json_body(req.body, state.limits().max_json_depth);
  const CompletionRequest completion = parse_completion_request(body, state.limits(), random_seed());
  auto prompt = completion_prompt_tokens(model->engine().tokenizer(), completion);
  std::string id = random_request_id("cmpl-");
  this_thread_request_log().id = id;
  auto request = prepare_text_generation(*model, std::move(prompt), completion.params, std::move(id), state.limits(),
                                        "prompt");
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
