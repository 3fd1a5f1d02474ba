// A streaming OpenAI client for measuring servers: it serializes the body first, starts its
// clock just before the request is written, and stamps every SSE event as its bytes arrive
// (steady clock, µs). It speaks to nanoserve and to any OpenAI-compatible server
// (llama-server, vLLM, Ollama): text comes from choices[0].text (completions) or
// choices[0].delta.content (chat); usage and nanoserve's engine clock are read when present.
// Every wait is bounded by the timeouts: a server that stops answering ends in an error.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <string>

#include "bench/endpoint.h"
#include "bench/stream_record.h"

namespace httplib {
class Client;
}

namespace nanoserve::bench {

struct ClientTimeouts {
  int connect_s = 10;
  int read_s = 600;  // longest silence (a long prefill sends nothing until its first token)
};

class StreamClient {
 public:
  // One kept-alive connection, opened on first use.
  StreamClient(Endpoint endpoint, ClientTimeouts timeouts = {});
  ~StreamClient();
  StreamClient(const StreamClient&) = delete;
  StreamClient& operator=(const StreamClient&) = delete;

  // POSTs `body` to `route` (e.g. "/v1/completions") with "stream": true and reads the
  // event stream to its end. Never throws for what the server does: failures (no
  // connection, a status other than 200, an error event, a stream cut short) are in
  // StreamRecord::error. With `stop` set (Ctrl-C), it gives up at the next arrival.
  StreamRecord stream(const std::string& route, nlohmann::json body, const std::atomic<bool>* stop = nullptr);

  // GET `route`: the status (0 when there was no answer), the body in `body`.
  int get(const std::string& route, std::string* body = nullptr);

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  Endpoint endpoint_;
  std::unique_ptr<httplib::Client> http_;
};

// Reads one SSE event's JSON into `record` (text arrival at `arrival_us`, finish reason,
// usage, engine clock, error). Returns false for "[DONE]". Exposed for tests.
bool read_stream_event(const std::string& data, int64_t arrival_us, StreamRecord& record);

}  // namespace nanoserve::bench
