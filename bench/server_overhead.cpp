// Server overhead from a C++ client (not a test): N streaming chat requests of T tokens, one
// after another on one kept-alive connection, against a running `nanoserve serve` (use the
// mock engine with no token delay). For each request, what the client observed minus the
// engine's own clock (the `nanoserve` object of the last chunk):
//   total: request sent -> [DONE] received, minus the engine's ttft + decode time
//   ttft:  request sent -> first text chunk, minus the engine's ttft_ms
// The node script (scripts/server-overhead.mjs) measures the same through node's HTTP stack,
// whose own parsing is then part of the figure; this client's share is a few microseconds.
//
//   ./build/nanoserve serve --engine mock --mock-token-delay-us 0 --model M.gguf --port 18090 &
//   ./build/bench/server_overhead --port 18090 --requests 200
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Sample {
  double client_total, total_overhead, ttft_overhead;
};

std::optional<Sample> one_request(httplib::Client& client, const std::string& body, int tokens) {
  std::string buffered;
  std::optional<Clock::time_point> first_text;
  nlohmann::json engine;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = body;
  req.set_header("Content-Type", "application/json");
  const auto start = Clock::now();
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    buffered.append(data, size);
    for (size_t end; (end = buffered.find("\n\n")) != std::string::npos;) {
      const std::string event = buffered.substr(6, end - 6);  // after "data: "
      buffered.erase(0, end + 2);
      if (event == "[DONE]") continue;
      const auto chunk = nlohmann::json::parse(event);
      const auto& choices = chunk["choices"];
      if (!first_text && !choices.empty() && choices[0]["delta"].contains("content") &&
          !choices[0]["delta"]["content"].get<std::string>().empty())
        first_text = Clock::now();
      if (chunk.contains("nanoserve")) engine = chunk["nanoserve"];
    }
    return true;
  };
  const auto res = client.send(req);
  const auto end = Clock::now();
  if (!res || res->status != 200 || engine.is_null() || !first_text) return std::nullopt;
  const double decode_tok_s = engine["decode_tok_s"].is_number() ? engine["decode_tok_s"].get<double>() : 0.0;
  const double decode_ms = decode_tok_s > 0 ? (tokens - 1) / decode_tok_s * 1e3 : 0.0;
  const double ttft_ms = engine["ttft_ms"].get<double>();
  return Sample{ms(end - start), ms(end - start) - (ttft_ms + decode_ms), ms(*first_text - start) - ttft_ms};
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100 * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Server overhead: client-observed time minus the engine's clock"};
  std::string host = "127.0.0.1";
  int port = 8080, requests = 200, tokens = 64, warmup = 10;
  app.add_option("--host", host);
  app.add_option("--port", port);
  app.add_option("--requests", requests)->check(CLI::Range(1, 1000000));
  app.add_option("--tokens", tokens)->check(CLI::Range(2, 4096));
  CLI11_PARSE(app, argc, argv);

  httplib::Client client(host, port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  const std::string body = nlohmann::json{
      {"messages", {{{"role", "user"}, {"content", "Tell me about the lighthouse."}}}},
      {"max_tokens", tokens},
      {"ignore_eos", true},
      {"temperature", 0},
      {"stream", true},
  }.dump();
  std::vector<double> client_total, total, ttft;
  for (int i = 0; i < warmup + requests; ++i) {
    const auto s = one_request(client, body, tokens);
    if (!s) {
      std::fprintf(stderr, "request %d failed (is `nanoserve serve` running on %s:%d?)\n", i, host.c_str(), port);
      return 1;
    }
    if (i < warmup) continue;
    client_total.push_back(s->client_total);
    total.push_back(s->total_overhead);
    ttft.push_back(s->ttft_overhead);
  }
  std::printf("%d streaming requests of %d tokens, one at a time (C++ client)\n", requests, tokens);
  const auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("%-34s p50 %.3f ms   p99 %.3f ms\n", name, percentile(v, 50), percentile(v, 99));
  };
  row("client total", client_total);
  row("overhead: total - engine clock", total);
  row("overhead: TTFT - engine ttft_ms", ttft);
  return 0;
}
