#include "server/generation_response.h"

#include <ctime>
#include <string_view>
#include <utility>

#include "server/api_error.h"
#include "server/generation_relay.h"
#include "server/http_errors.h"
#include "server/logprobs_json.h"
#include "server/request_log.h"
#include "server/sse.h"

namespace nanoserve::server {
namespace {

ApiError generation_failed(const std::string& message) {
  return ApiError(500, "generation failed: " + message, "server_error");
}

void respond_whole(http::ResponseWriter& res, ServerState& state, engine::Stream& stream, const ResponseHeader& header,
                   const ResponseShape& shape, bool logprobs_asked) {
  RequestLogRecord& log = this_thread_request_log();
  std::string text;
  std::vector<engine::TokenLogprobs> logprobs;
  const RelayEnd end = relay_generation(
      stream, log.received,
      [&](const std::string& piece, std::vector<engine::TokenLogprobs> piece_logprobs) {
        text += piece;
        for (engine::TokenLogprobs& t : piece_logprobs) logprobs.push_back(std::move(t));
        return true;
      },
      [&res] { return !res.client_gone(); }, state.metrics());
  switch (end.kind) {
    case RelayEnd::Kind::ClientGone:
      log.cancelled = true;
      res.send(error_response(ApiError(499, "the client closed the connection", "invalid_request_error")));
      return;  // never written: the connection is gone
    case RelayEnd::Kind::Failed:
      throw generation_failed(end.error);
    case RelayEnd::Kind::Done:
      log.stats = end.stats;
      nlohmann::ordered_json body = shape.whole(header, text, end.finish, end.stats);
      if (logprobs_asked) body["choices"][0]["logprobs"] = shape.logprobs(logprobs, 0);
      res.send({.status = 200, .content_type = "application/json", .headers = {}, .body = json_text(body)});
  }
}

void stream_events(http::ResponseWriter& res, ServerState& state, engine::Stream& stream, const ResponseHeader& header,
                   const ResponseShape& shape, bool include_usage, bool logprobs_asked) {
  RequestLogRecord& log = this_thread_request_log();
  res.start_stream({.status = 200, .content_type = "text/event-stream",
                    .headers = {{"Cache-Control", "no-cache"}}, .body = {}});
  SseWriter sse([&res](std::string_view bytes) { return res.write(bytes); });
  // With include_usage every chunk has "usage": null but the last one, as OpenAI sends them.
  auto send_chunk = [&](nlohmann::ordered_json chunk) {
    if (include_usage) chunk["usage"] = nullptr;
    return sse.send(chunk);
  };
  if (shape.opens_with_role) send_chunk(chat_chunk(header, {{"role", "assistant"}, {"content", ""}}));
  size_t characters_sent = 0;
  const RelayEnd end = relay_generation(
      stream, log.received,
      [&](const std::string& text, std::vector<engine::TokenLogprobs> logprobs) {
        nlohmann::ordered_json chunk = shape.text_chunk(header, text);
        if (logprobs_asked) chunk["choices"][0]["logprobs"] = shape.logprobs(logprobs, characters_sent);
        characters_sent += utf8_characters(text);
        return send_chunk(std::move(chunk));
      },
      [&] { return sse.ok() && !res.client_gone(); }, state.metrics());
  switch (end.kind) {
    case RelayEnd::Kind::ClientGone:
      log.cancelled = true;
      return;  // the stream stays unfinished: the connection closes
    case RelayEnd::Kind::Failed:
      sse.send(error_body(generation_failed(end.error)));
      break;
    case RelayEnd::Kind::Done: {
      log.stats = end.stats;
      nlohmann::ordered_json finish = shape.finish_chunk(header, end.finish);
      if (include_usage) {
        send_chunk(std::move(finish));
        nlohmann::ordered_json usage = usage_chunk(header, shape.chunk_object, end.stats);
        usage["nanoserve"] = engine_stats_json(end.stats);
        sse.send(usage);
      } else {
        finish["nanoserve"] = engine_stats_json(end.stats);
        sse.send(finish);
      }
      break;
    }
  }
  sse.send_done();
  res.end_stream();
}

}  // namespace

void respond_with_generation(http::ResponseWriter& res, ServerState& state, std::shared_ptr<const ServedModel> model,
                             engine::GenerationRequest request, const GenerationParams& params,
                             const ResponseShape& shape) {
  const ResponseHeader header{.id = request.id, .created = static_cast<int64_t>(std::time(nullptr)),
                              .model = model->name()};
  std::shared_ptr<engine::Stream> stream = model->engine().submit(std::move(request));
  // However the answer ends (an exception too), nothing keeps generating for nobody.
  struct CancelOnExit {
    engine::Stream& stream;
    ~CancelOnExit() { stream.cancel(); }
  } cancel_on_exit{*stream};
  if (params.stream) {
    stream_events(res, state, *stream, header, shape, params.include_usage, params.logprobs);
  } else {
    respond_whole(res, state, *stream, header, shape, params.logprobs);
  }
}

}  // namespace nanoserve::server
