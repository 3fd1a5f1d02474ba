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

// How the answer is written besides its shape: what the request asked for.
struct AnswerOptions {
  bool include_usage = false;
  bool logprobs = false;
  ChatReaders readers;
};

// What a piece of output gives the answer once its readers have read it.
struct AnswerPieces {
  std::string reasoning, content;
  std::vector<ToolCall> calls;
};

// The reasoning split first (a thought may precede a call), then the tool calls out of the rest.
AnswerPieces read_piece(ChatReaders& readers, std::string_view text, bool last) {
  AnswerPieces out;
  out.content = text;
  if (readers.reasoning) {
    ReasoningSplit::Pieces split = readers.reasoning->push(text);
    if (last) {
      ReasoningSplit::Pieces rest = readers.reasoning->finish();
      split.reasoning += rest.reasoning;
      split.content += rest.content;
    }
    out.reasoning = std::move(split.reasoning);
    out.content = std::move(split.content);
  }
  if (readers.tool_calls) {
    ToolCallReader::Pieces read = readers.tool_calls->push(out.content);
    if (last) {
      ToolCallReader::Pieces rest = readers.tool_calls->finish();
      read.content += rest.content;
      for (ToolCall& c : rest.calls) read.calls.push_back(std::move(c));
    }
    out.content = std::move(read.content);
    out.calls = std::move(read.calls);
  }
  return out;
}

void respond_whole(http::ResponseWriter& res, ServerState& state, engine::Stream& stream, const ResponseHeader& header,
                   const ResponseShape& shape, AnswerOptions& options) {
  RequestLogRecord& log = this_thread_request_log();
  AnswerPieces answer;
  auto add = [&](AnswerPieces pieces) {
    answer.reasoning += pieces.reasoning;
    answer.content += pieces.content;
    for (ToolCall& c : pieces.calls) answer.calls.push_back(std::move(c));
  };
  std::vector<engine::TokenLogprobs> logprobs;
  const RelayEnd end = relay_generation(
      stream, log.received,
      [&](const std::string& piece, std::vector<engine::TokenLogprobs> piece_logprobs) {
        add(read_piece(options.readers, piece, false));
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
      add(read_piece(options.readers, "", true));
      nlohmann::ordered_json body = shape.whole(header, answer.content, end.finish, end.stats);
      nlohmann::ordered_json& choice = body["choices"][0];
      if (!answer.reasoning.empty()) choice["message"]["reasoning_content"] = answer.reasoning;
      if (!answer.calls.empty()) {
        if (answer.content.empty()) choice["message"]["content"] = nullptr;
        choice["message"]["tool_calls"] = tool_calls_json(answer.calls);
        choice["finish_reason"] = "tool_calls";
      }
      if (options.logprobs) choice["logprobs"] = shape.logprobs(logprobs, 0);
      res.send({.status = 200, .content_type = "application/json", .headers = {}, .body = json_text(body)});
  }
}

void stream_events(http::ResponseWriter& res, ServerState& state, engine::Stream& stream, const ResponseHeader& header,
                   const ResponseShape& shape, AnswerOptions& options) {
  RequestLogRecord& log = this_thread_request_log();
  res.start_stream({.status = 200, .content_type = "text/event-stream",
                    .headers = {{"Cache-Control", "no-cache"}}, .body = {}});
  SseWriter sse([&res](std::string_view bytes) { return res.write(bytes); });
  // With include_usage every chunk has "usage": null but the last one, as OpenAI sends them.
  auto send_chunk = [&](nlohmann::ordered_json chunk) {
    if (options.include_usage) chunk["usage"] = nullptr;
    return sse.send(chunk);
  };
  if (shape.opens_with_role) send_chunk(chat_chunk(header, {{"role", "assistant"}, {"content", ""}}));
  size_t characters_sent = 0, calls_sent = 0;
  // Reasoning, content, then each call (its id and name, then its arguments): a chunk each;
  // the tokens' logprobs ride on the first of them.
  auto send_pieces = [&](const AnswerPieces& pieces, std::vector<engine::TokenLogprobs> logprobs) {
    std::vector<nlohmann::ordered_json> chunks;
    if (!pieces.reasoning.empty()) chunks.push_back(chat_chunk(header, {{"reasoning_content", pieces.reasoning}}));
    if (!pieces.content.empty()) chunks.push_back(shape.text_chunk(header, pieces.content));
    for (const ToolCall& call : pieces.calls) {
      const size_t index = calls_sent++;
      chunks.push_back(chat_chunk(header, {{"tool_calls", {{{"index", index}, {"id", call.id}, {"type", "function"},
                                                            {"function", {{"name", call.name}, {"arguments", ""}}}}}}}));
      chunks.push_back(
          chat_chunk(header, {{"tool_calls", {{{"index", index}, {"function", {{"arguments", call.arguments}}}}}}}));
    }
    if (chunks.empty()) return true;
    if (options.logprobs) chunks[0]["choices"][0]["logprobs"] = shape.logprobs(logprobs, characters_sent);
    characters_sent += utf8_characters(pieces.content);
    for (nlohmann::ordered_json& chunk : chunks)
      if (!send_chunk(std::move(chunk))) return false;
    return true;
  };
  const RelayEnd end = relay_generation(
      stream, log.received,
      [&](const std::string& text, std::vector<engine::TokenLogprobs> logprobs) {
        return send_pieces(read_piece(options.readers, text, false), std::move(logprobs));
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
      send_pieces(read_piece(options.readers, "", true), {});
      nlohmann::ordered_json finish = shape.finish_chunk(header, end.finish);
      if (calls_sent > 0) finish["choices"][0]["finish_reason"] = "tool_calls";
      if (options.include_usage) {
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
                             const ResponseShape& shape, ChatReaders readers) {
  const ResponseHeader header{.id = request.id, .created = static_cast<int64_t>(std::time(nullptr)),
                              .model = model->name()};
  std::shared_ptr<engine::Stream> stream = model->engine().submit(std::move(request));
  // However the answer ends (an exception too), nothing keeps generating for nobody.
  struct CancelOnExit {
    engine::Stream& stream;
    ~CancelOnExit() { stream.cancel(); }
  } cancel_on_exit{*stream};
  AnswerOptions options{.include_usage = params.include_usage, .logprobs = params.logprobs,
                        .readers = std::move(readers)};
  if (params.stream) {
    stream_events(res, state, *stream, header, shape, options);
  } else {
    respond_whole(res, state, *stream, header, shape, options);
  }
}

}  // namespace nanoserve::server
