// The HTTP front end while slow clients hold connections open (slowloris), side by side with
// cpp-httplib configured as nanoserve served with it before src/http/ (a pool of 76 threads, one
// per connection: `serve`'s default of --parallel 8 + --max-queue 64 + 4). Both serve the same
// two routes in this process: GET /health, and GET /stream, whose first chunk goes out at once
// (what a generation's first token costs the front end). Each iteration opens a connection, as a
// health checker or a new client does, and waits at most 250 ms for its answer.
//
//   ./build/bench/http_frontend_bench --benchmark_repetitions=3
//
// Arguments: /0 = nanoserve's http::Server, /1 = httplib; then the slow connections (0 or 256),
// each sending one more byte of a request head every 500 ms. Counters: p50_ms, p99_ms, and
// timeouts (answers that did not come within 250 ms, counted at 250 ms).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kAnswerTimeout{250};
constexpr size_t kHttplibThreads = 8 + 64 + 4;

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect");
  }
  return fd;
}

// Sends `request` on a new connection and waits until the answer holds `until`; the time it
// took, or the timeout.
double round_trip_ms(int port, const std::string& request, const std::string& until) {
  const auto start = Clock::now();
  const int fd = connect_to(port);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string got;
  char buffer[4096];
  bool done = false;
  while (!done) {
    const auto left = kAnswerTimeout - (Clock::now() - start);
    pollfd p{fd, POLLIN, 0};
    if (left <= Clock::duration::zero() ||
        ::poll(&p, 1, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(left).count())) <= 0)
      break;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<size_t>(n));
    done = got.find(until) != std::string::npos;
  }
  ::close(fd);
  return done ? std::chrono::duration<double, std::milli>(Clock::now() - start).count()
              : static_cast<double>(kAnswerTimeout.count());
}

class Peer {
 public:
  virtual ~Peer() = default;
  virtual int port() const = 0;
};

class NanoservePeer : public Peer {
 public:
  NanoservePeer() {
    using namespace nanoserve::http;
    auto text = [](std::string body) {
      return Response{.status = 200, .content_type = "text/plain", .headers = {}, .body = std::move(body)};
    };
    std::vector<Route> routes = {
        {.method = "GET", .path = "/health",
         .handler = [text](const Request&, ResponseWriter& w) { w.send(text("ok")); }, .on_event_loop = true},
        {.method = "GET", .path = "/stream",
         .handler =
             [text](const Request&, ResponseWriter& w) {
               w.start_stream(text(""));
               w.write("data: first\n\n");
               w.end_stream();
             },
         .on_event_loop = false},
    };
    ServerHooks hooks{.check_head = {}, .error_response = [text](const std::string&, int, const std::string& m) {
                        return text(m);
                      },
                      .answered = {}};
    server_ = std::make_unique<Server>(ServerConfig{.host = "127.0.0.1", .port = 0, .workers = kHttplibThreads,
                                                    .limits = {}},
                                       std::move(routes), std::move(hooks));
    port_ = server_->start();
  }
  int port() const override { return port_; }

 private:
  std::unique_ptr<nanoserve::http::Server> server_;
  int port_ = 0;
};

class HttplibPeer : public Peer {
 public:
  HttplibPeer() {
    server_.new_task_queue = [] { return new httplib::ThreadPool(kHttplibThreads); };
    server_.set_keep_alive_max_count(1000);
    server_.set_tcp_nodelay(true);
    server_.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    server_.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
        sink.write("data: first\n\n", 13);
        sink.done();
        return true;
      });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HttplibPeer() override {
    server_.stop();
    thread_.join();
  }
  int port() const override { return port_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// Connections that send a request head one byte at a time, every 500 ms, for as long as they live.
class SlowClients {
 public:
  SlowClients(int port, int count) {
    for (int i = 0; i < count; ++i) {
      fds_.push_back(connect_to(port));
      ::send(fds_.back(), "GET /health HTTP/1.1\r\nX", 23, MSG_NOSIGNAL);
    }
    if (count > 0) thread_ = std::thread([this] { trickle(); });
  }
  ~SlowClients() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (const int fd : fds_) ::close(fd);
  }

 private:
  void trickle() {
    while (!stop_) {
      for (int i = 0; i < 50 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (const int fd : fds_) ::send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }

  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::unique_ptr<Peer> make_peer(int64_t kind) {
  if (kind == 0) return std::make_unique<NanoservePeer>();
  return std::make_unique<HttplibPeer>();
}

void report(benchmark::State& state, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) return;
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  state.counters["timeouts"] =
      static_cast<double>(std::count(ms.begin(), ms.end(), static_cast<double>(kAnswerTimeout.count())));
  state.SetLabel(state.range(0) == 0 ? "nanoserve http" : "cpp-httplib");
}

void measure(benchmark::State& state, const std::string& request, const std::string& until) {
  auto peer = make_peer(state.range(0));
  SlowClients slow(peer->port(), static_cast<int>(state.range(1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the server take them all in
  std::vector<double> ms;
  for (auto _ : state) {
    const double t = round_trip_ms(peer->port(), request, until);
    ms.push_back(t);
    state.SetIterationTime(t / 1000);
  }
  report(state, std::move(ms));
}

void BM_Health(benchmark::State& state) {
  measure(state, "GET /health HTTP/1.1\r\nHost: b\r\n\r\n", "\r\n\r\nok");
}

void BM_StreamFirstChunk(benchmark::State& state) {
  measure(state, "GET /stream HTTP/1.1\r\nHost: b\r\n\r\n", "data: first");
}

BENCHMARK(BM_Health)->ArgsProduct({{0, 1}, {0, 256}})->UseManualTime()->Iterations(200)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StreamFirstChunk)
    ->ArgsProduct({{0, 1}, {0, 256}})
    ->UseManualTime()
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
