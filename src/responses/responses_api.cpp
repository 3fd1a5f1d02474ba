#include "responses/responses_api.h"

#include <ctime>
#include <utility>

#include "responses/response_output.h"
#include "responses/responses_request.h"
#include "server/answer_relay.h"
#include "server/api_error.h"
#include "server/chat_generation.h"
#include "server/json_fields.h"
#include "server/request_id.h"
#include "server/request_log.h"
#include "server/response_json.h"

namespace nanoserve::responses {
namespace {

using server::AnswerPieces;
using server::RelayEnd;

void create_response(const http::Request& req, http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  const auto body = server::parse_json_body(req.body, state.limits().max_json_depth);
  const ResponsesRequest parsed = parse_responses_request(body, state.limits(), server::random_seed());
  std::string id = server::random_request_id("resp_");
  server::this_thread_request_log().id = id;
  server::ChatGeneration generation = server::prepare_chat_generation(*model, parsed.chat, id, state.limits());
  nlohmann::ordered_json response = {{"id", id},
                                     {"object", "response"},
                                     {"created_at", static_cast<int64_t>(std::time(nullptr))},
                                     {"model", model->name()}};
  for (const auto& [key, value] : parsed.echo.items()) response[key] = value;
  auto stream = model->engine().submit(std::move(generation.request));
  const bool streamed = parsed.chat.params.stream;
  std::optional<server::SseWriter> sse;
  if (streamed) sse.emplace(server::start_event_stream(res));
  ResponseOutput output(std::move(response), sse ? &*sse : nullptr);
  output.start();
  const RelayEnd end = server::relay_answer(
      state, std::move(stream), std::move(generation.readers),
      [&](const AnswerPieces& pieces) { return output.add(pieces); },
      [&] { return (!sse || sse->ok()) && !res.client_gone(); });
  if (end.kind == RelayEnd::Kind::ClientGone) return;
  if (end.kind == RelayEnd::Kind::Failed) {
    const server::ApiError error = server::generation_failed(end.error);
    if (!streamed) throw error;
    output.fail(error);
    res.end_stream();
    return;
  }
  const nlohmann::ordered_json whole = output.finish(end);
  if (streamed) {
    res.end_stream();
  } else {
    res.send(server::json_response(whole));
  }
}

}  // namespace

server::ApiFamily responses_api() {
  auto routes = [](server::ServerState& state) {
    return std::vector<http::Route>{
        {.method = "POST", .path = "/v1/responses",
         .handler = [&state](const http::Request& req, http::ResponseWriter& res) { create_response(req, res, state); },
         .on_event_loop = false},
    };
  };
  return {.path_prefixes = {"/v1/responses"}, .error_body = server::error_body, .routes = routes};
}

}  // namespace nanoserve::responses
