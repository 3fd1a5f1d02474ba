#include "server/generation_response.h"

#include <fmt/format.h>

#include <ctime>
#include <exception>
#include <string_view>
#include <utility>

#include "server/api_error.h"
#include "server/generation_relay.h"
#include "server/request_log.h"
#include "server/sse.h"

namespace nanoserve::server {
namespace {

ApiError generation_failed(const std::string& message) {
  return ApiError(500, "generation failed: " + message, "server_error");
}

void respond_whole(httplib::Response& res, ServerState& state, engine::Stream& stream, const ResponseHeader& header,
                   const ResponseShape& shape) {
  RequestLogRecord& log = this_thread_request_log();
  std::string text;
  // httplib gives a plain handler no way to see the client leave; the whole answer is
  // generated (bounded by max_tokens) and then sent.
  const RelayEnd end = relay_generation(
      stream, log.received, [&](const std::string& piece) { text += piece; return true; }, [] { return true; },
      state.metrics());
  if (end.kind == RelayEnd::Kind::Failed) throw generation_failed(end.error);
  log.stats = end.stats;
  res.set_content(json_text(shape.whole(header, text, end.finish, end.stats)), "application/json");
}

// Writes the whole event stream from within httplib's content provider.
bool stream_events(httplib::DataSink& sink, ServerState& state, engine::Stream& stream, const ResponseHeader& header,
                   const ResponseShape& shape, bool include_usage) {
  RequestLogRecord& log = this_thread_request_log();
  SseWriter sse([&sink](std::string_view bytes) { return sink.write(bytes.data(), bytes.size()); });
  // With include_usage every chunk has "usage": null but the last one, as OpenAI sends them.
  auto send_chunk = [&](nlohmann::ordered_json chunk) {
    if (include_usage) chunk["usage"] = nullptr;
    return sse.send(chunk);
  };
  if (shape.opens_with_role) send_chunk(chat_chunk(header, {{"role", "assistant"}, {"content", ""}}));
  const RelayEnd end = relay_generation(
      stream, log.received, [&](const std::string& text) { return send_chunk(shape.text_chunk(header, text)); },
      [&] { return sse.ok() && sink.is_writable(); }, state.metrics());
  switch (end.kind) {
    case RelayEnd::Kind::ClientGone:
      log.cancelled = true;
      return false;  // httplib closes the connection
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
  sink.done();
  return sse.ok();
}

}  // namespace

void respond_with_generation(httplib::Response& res, ServerState& state, std::shared_ptr<const ServedModel> model,
                             engine::GenerationRequest request, const GenerationParams& params,
                             const ResponseShape& shape) {
  const ResponseHeader header{.id = request.id, .created = static_cast<int64_t>(std::time(nullptr)),
                              .model = model->name()};
  std::shared_ptr<engine::Stream> stream = model->engine().submit(std::move(request));
  if (!params.stream) {
    respond_whole(res, state, *stream, header, shape);
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  // The provider holds the model, so the engine outlives every stream it feeds.
  res.set_chunked_content_provider(
      "text/event-stream",
      [&state, model, stream, header, &shape, include_usage = params.include_usage](size_t, httplib::DataSink& sink) {
        // httplib runs this outside its handler's try: nothing may escape.
        try {
          return stream_events(sink, state, *stream, header, shape, include_usage);
        } catch (const std::exception& e) {
          fmt::print(stderr, "nanoserve: {}: stream failed: {}\n", header.id, e.what());
          return false;
        }
      },
      // Runs however the response ends (also when it never started): nothing keeps generating for nobody.
      [stream](bool) { stream->cancel(); });
}

}  // namespace nanoserve::server
