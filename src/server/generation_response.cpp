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

// How the answer is written besides its shape: what the request asked for.
struct AnswerOptions {
  bool include_usage = false;
  bool logprobs = false;
  ChatReaders readers;  // each choice reads with its own copy
};

// The usage of all choices: the prompt once, every choice's completion.
nlohmann::ordered_json total_usage(const std::vector<RelayEnd>& ends) {
  engine::RequestStats total = ends.at(0).stats;
  total.completion_tokens = 0;
  for (const RelayEnd& e : ends) total.completion_tokens += e.stats.completion_tokens;
  return usage_json(total);
}

void respond_whole(http::ResponseWriter& res, ServerState& state, std::span<engine::Stream* const> streams,
                   const ResponseHeader& header, const ResponseShape& shape, const AnswerOptions& options) {
  RequestLogRecord& log = this_thread_request_log();
  const size_t n = streams.size();
  std::vector<AnswerPieces> answers(n);
  std::vector<ChatReaders> readers(n, options.readers);
  std::vector<std::vector<engine::TokenLogprobs>> logprobs(n);
  const std::vector<RelayEnd> ends = relay_generations(
      streams, log.received,
      [&](size_t c, const std::string& piece, std::vector<engine::TokenLogprobs> piece_logprobs) {
        answers[c].append(read_piece(readers[c], piece, false));
        for (engine::TokenLogprobs& t : piece_logprobs) logprobs[c].push_back(std::move(t));
        return true;
      },
      [](size_t, const RelayEnd&) {}, [&res] { return !res.client_gone(); }, state);
  for (const RelayEnd& end : ends) {
    if (end.kind == RelayEnd::Kind::ClientGone) {
      log.cancelled = true;
      res.send(error_response(ApiError(499, "the client closed the connection", "invalid_request_error")));
      return;  // never written: the connection is gone
    }
    if (end.kind == RelayEnd::Kind::Failed) throw generation_failed(end.error);
  }
  log.stats = ends[0].stats;
  nlohmann::ordered_json body;
  for (size_t c = 0; c < n; ++c) {
    answers[c].append(read_piece(readers[c], "", true));
    const AnswerPieces& answer = answers[c];
    nlohmann::ordered_json whole = shape.whole(header, answer.content, ends[c].finish, ends[c].stats);
    nlohmann::ordered_json& choice = whole["choices"][0];
    choice["index"] = c;
    if (!answer.reasoning.empty()) choice["message"]["reasoning_content"] = answer.reasoning;
    if (!answer.calls.empty()) {
      if (answer.content.empty()) choice["message"]["content"] = nullptr;
      choice["message"]["tool_calls"] = tool_calls_json(answer.calls);
      choice["finish_reason"] = "tool_calls";
    }
    if (options.logprobs) choice["logprobs"] = shape.logprobs(logprobs[c], 0);
    if (c == 0)
      body = std::move(whole);  // its header, usage and the first choice's nanoserve object
    else
      body["choices"].push_back(std::move(choice));
  }
  body["usage"] = total_usage(ends);
  res.send(json_response(body));
}

void stream_events(http::ResponseWriter& res, ServerState& state, std::span<engine::Stream* const> streams,
                   const ResponseHeader& header, const ResponseShape& shape, const AnswerOptions& options) {
  RequestLogRecord& log = this_thread_request_log();
  const size_t n = streams.size();
  SseWriter sse = start_event_stream(res);
  // With include_usage every chunk has "usage": null but the last one, as OpenAI sends them.
  auto send_chunk = [&](size_t c, nlohmann::ordered_json chunk) {
    chunk["choices"][0]["index"] = c;
    if (options.include_usage) chunk["usage"] = nullptr;
    return sse.send(chunk);
  };
  for (size_t c = 0; c < n && shape.opens_with_role; ++c)
    send_chunk(c, chat_chunk(header, {{"role", "assistant"}, {"content", ""}}));
  std::vector<ChatReaders> readers(n, options.readers);
  std::vector<size_t> characters_sent(n, 0), calls_sent(n, 0);
  // Reasoning, content, then each call (its id and name, then its arguments): a chunk each;
  // the tokens' logprobs ride on the first of them.
  auto send_pieces = [&](size_t c, const AnswerPieces& pieces, std::vector<engine::TokenLogprobs> logprobs) {
    std::vector<nlohmann::ordered_json> chunks;
    if (!pieces.reasoning.empty()) chunks.push_back(chat_chunk(header, {{"reasoning_content", pieces.reasoning}}));
    if (!pieces.content.empty()) chunks.push_back(shape.text_chunk(header, pieces.content));
    for (const ToolCall& call : pieces.calls) {
      const size_t index = calls_sent[c]++;
      chunks.push_back(chat_chunk(header, {{"tool_calls", {{{"index", index}, {"id", call.id}, {"type", "function"},
                                                            {"function", {{"name", call.name}, {"arguments", ""}}}}}}}));
      chunks.push_back(
          chat_chunk(header, {{"tool_calls", {{{"index", index}, {"function", {{"arguments", call.arguments}}}}}}}));
    }
    if (chunks.empty()) return true;
    if (options.logprobs) chunks[0]["choices"][0]["logprobs"] = shape.logprobs(logprobs, characters_sent[c]);
    characters_sent[c] += utf8_characters(pieces.content);
    for (nlohmann::ordered_json& chunk : chunks)
      if (!send_chunk(c, std::move(chunk))) return false;
    return true;
  };
  size_t still_open = n;
  engine::RequestStats first_stats;  // the first choice's: the nanoserve object's
  // A choice's end: what its readers still hold, then its finish chunk. The last finish chunk
  // carries the nanoserve object, unless a usage chunk follows to carry it.
  auto finish_choice = [&](size_t c, const RelayEnd& end) {
    --still_open;
    if (end.kind != RelayEnd::Kind::Done) return;
    if (c == 0) first_stats = end.stats;
    send_pieces(c, read_piece(readers[c], "", true), {});
    nlohmann::ordered_json finish = shape.finish_chunk(header, end.finish);
    if (calls_sent[c] > 0) finish["choices"][0]["finish_reason"] = "tool_calls";
    if (still_open == 0 && !options.include_usage) finish["nanoserve"] = engine_stats_json(first_stats);
    send_chunk(c, std::move(finish));
  };
  const std::vector<RelayEnd> ends = relay_generations(
      streams, log.received,
      [&](size_t c, const std::string& text, std::vector<engine::TokenLogprobs> logprobs) {
        return send_pieces(c, read_piece(readers[c], text, false), std::move(logprobs));
      },
      finish_choice, [&] { return sse.ok() && !res.client_gone(); }, state);
  for (const RelayEnd& end : ends) {
    if (end.kind == RelayEnd::Kind::ClientGone) {
      log.cancelled = true;
      return;  // the stream stays unfinished: the connection closes
    }
    if (end.kind == RelayEnd::Kind::Failed) {
      sse.send(error_body(generation_failed(end.error)));
      sse.send_done();
      res.end_stream();
      return;
    }
  }
  log.stats = ends[0].stats;
  if (options.include_usage) {
    nlohmann::ordered_json usage = usage_chunk(header, shape.chunk_object, ends[0].stats);
    usage["usage"] = total_usage(ends);
    usage["nanoserve"] = engine_stats_json(ends[0].stats);
    sse.send(usage);
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
  // However the answer ends (an exception too), nothing keeps generating for nobody.
  struct CancelOnExit {
    std::vector<std::shared_ptr<engine::Stream>> streams;
    ~CancelOnExit() {
      for (auto& s : streams) s->cancel();
    }
  } owned;
  // n choices: the first is prefilled alone; once its first token is out, its prompt's blocks
  // (and the logits after them) are in the prefix cache, where the others find them.
  for (int32_t c = 0; c < params.n; ++c) {
    engine::GenerationRequest choice = request;
    choice.sampling.seed = request.sampling.seed + static_cast<uint64_t>(c);
    owned.streams.push_back(model->engine().submit(std::move(choice)));
    if (c == 0 && params.n > 1)
      while (!owned.streams[0]->wait_for_event(std::chrono::milliseconds(10)))
        if (res.client_gone()) return;
  }
  std::vector<engine::Stream*> streams;
  for (auto& s : owned.streams) streams.push_back(s.get());
  const AnswerOptions options{.include_usage = params.include_usage, .logprobs = params.logprobs,
                              .readers = std::move(readers)};
  if (params.stream) {
    stream_events(res, state, streams, header, shape, options);
  } else {
    respond_whole(res, state, streams, header, shape, options);
  }
}

}  // namespace nanoserve::server
