#include "anthropic/anthropic_api.h"

#include <utility>

#include "anthropic/messages_request.h"
#include "anthropic/messages_response.h"
#include "server/answer_relay.h"
#include "server/api_error.h"
#include "server/chat_generation.h"
#include "server/json_fields.h"
#include "server/prompt_tokens.h"
#include "server/request_id.h"
#include "server/request_log.h"
#include "server/response_json.h"

namespace nanoserve::anthropic {
namespace {

using server::AnswerPieces;
using server::RelayEnd;

void messages(const http::Request& req, http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  const auto body = server::parse_json_body(req.body, state.limits().max_json_depth);
  const MessagesRequest parsed = parse_messages_request(body, state.limits(), server::random_seed(), false);
  std::string id = server::random_request_id("msg_");
  server::this_thread_request_log().id = id;
  server::ChatGeneration generation = server::prepare_chat_generation(*model, parsed.chat, id, state.limits());
  const auto prompt_tokens = static_cast<int32_t>(generation.request.prompt.size());
  auto stream = model->engine().submit(std::move(generation.request));
  if (!parsed.chat.params.stream) {
    AnswerPieces answer;
    const RelayEnd end = server::relay_answer(
        state, std::move(stream), std::move(generation.readers),
        [&](AnswerPieces pieces) {
          answer.append(std::move(pieces));
          return true;
        },
        [&res] { return !res.client_gone(); });
    if (end.kind == RelayEnd::Kind::ClientGone) return;
    if (end.kind == RelayEnd::Kind::Failed) throw server::generation_failed(end.error);
    res.send(server::json_response(message_json(id, model->name(), answer, end)));
    return;
  }
  server::SseWriter sse = server::start_event_stream(res);
  MessageEvents events(sse, id, model->name());
  events.start(prompt_tokens);
  const RelayEnd end = server::relay_answer(
      state, std::move(stream), std::move(generation.readers),
      [&](const AnswerPieces& pieces) { return events.add(pieces); },
      [&] { return sse.ok() && !res.client_gone(); });
  if (end.kind == RelayEnd::Kind::Done) events.finish(end);
  if (end.kind == RelayEnd::Kind::Failed) events.fail(server::generation_failed(end.error));
  if (end.kind != RelayEnd::Kind::ClientGone) res.end_stream();
}

void count_tokens(const http::Request& req, http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  const auto body = server::parse_json_body(req.body, state.limits().max_json_depth);
  const MessagesRequest parsed = parse_messages_request(body, state.limits(), server::random_seed(), true);
  const auto prompt = server::chat_prompt_tokens(model->chat_template(), model->engine().tokenizer(), parsed.chat);
  res.send(server::json_response({{"input_tokens", prompt.size()}}));
}

}  // namespace

server::ApiFamily anthropic_api() {
  using http::Request;
  using http::ResponseWriter;
  auto routes = [](server::ServerState& state) {
    auto handle = [&state](void (*handler)(const Request&, ResponseWriter&, server::ServerState&)) {
      return [&state, handler](const Request& req, ResponseWriter& res) { handler(req, res, state); };
    };
    return std::vector<http::Route>{
        {.method = "POST", .path = "/v1/messages", .handler = handle(messages), .on_event_loop = false},
        {.method = "POST", .path = "/v1/messages/count_tokens", .handler = handle(count_tokens),
         .on_event_loop = false},
    };
  };
  return {.path_prefixes = {"/v1/messages"}, .error_body = anthropic_error_body, .routes = routes};
}

}  // namespace nanoserve::anthropic
