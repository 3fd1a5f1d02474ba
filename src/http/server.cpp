#include "http/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "http/exchange.h"
#include "http/leader_followers.h"
#include "http/socket_send.h"

namespace nanoserve::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenerId = 0;
constexpr uint64_t kWakeId = 1;
// A connection past the caps gets this long to ask for a route served on the loop.
constexpr std::chrono::milliseconds kOverCapTimeout{2'000};
// Past the caps by this many more, a new connection is closed at once.
constexpr size_t kOverCapReserve = 64;
// After an error that ends a connection, what the client still sends is read and dropped
// for a while (nginx's lingering close), so that closing does not reset the connection before
// it reads the answer: a client that sends a whole oversized body before it reads (the SDKs do)
// gets its 413. Bounded in time and bytes, so a client cannot hold the loop's attention.
constexpr std::chrono::milliseconds kLingerTime{2'000};
constexpr size_t kLingerBytes = 128u << 20;
constexpr size_t kReadBufferBytes = 64u << 10;

std::string peer_address(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, text, sizeof text);
  else if (addr.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, text, sizeof text);
  return text;
}

int bind_listener(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || !found)
    throw std::runtime_error(fmt::format("cannot listen on {}:{}: unknown host", host, port));
  int fd = -1;
  std::string error;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", host, port, error));
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(addr).sin6_port
                                          : reinterpret_cast<sockaddr_in&>(addr).sin_port);
}

}  // namespace

class Server::Loop {
 public:
  Loop(ServerConfig config, std::vector<Route> routes, ServerHooks hooks)
      : config_(std::move(config)), routes_(std::move(routes)), hooks_(std::move(hooks)) {}

  ~Loop() { stop(); }

  int start() {
    listener_ = bind_listener(config_.host, config_.port);
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    watch(listener_, kListenerId, EPOLLIN);
    watch(wake_fd_, kWakeId, EPOLLIN);
    next_sweep_ = Clock::now() + config_.limits.sweep_interval;
    threads_ = std::make_unique<LeaderFollowers>(config_.workers, [this] { return lead(); });
    return bound_port(listener_);
  }

  void drain() {
    draining_ = true;
    wake();
  }

  int64_t in_flight() const { return in_flight_.load(); }

  void stop() {
    if (!threads_) return;
    stopping_ = true;
    wake();
    threads_.reset();  // the loop has waited for every answer, and every handler has returned
    for (auto& [id, c] : connections_) ::close(c.fd);
    connections_.clear();
    for (int* fd : {&listener_, &epoll_, &wake_fd_})
      if (*fd >= 0) ::close(std::exchange(*fd, -1));
  }

 private:
  enum class Phase {
    Reading,    // a request's bytes (or none yet, between requests)
    Serving,    // a complete request is being answered
    Lingering,  // the answer ended the connection: drop what still comes, then close
  };

  struct Connection {
    int fd = -1;
    std::string peer;
    bool over_cap = false;  // opened past the caps: only routes on the loop are served
    Phase phase = Phase::Reading;
    RequestParser parser;
    std::string in;                // bytes read and not parsed yet
    std::string out;               // bytes to write: answers the loop makes itself
    size_t out_sent = 0;
    Clock::time_point since;       // start of the current phase's deadline
    Clock::time_point last_write;  // last progress writing `out`
    std::shared_ptr<Exchange> exchange;  // while Serving: the worker's answer
    bool answer_waits = false;           // its bytes wait for a writable socket
    size_t dropped_bytes = 0;  // read and dropped while Lingering
    uint32_t events = 0;  // what epoll watches

    explicit Connection(const ParseLimits& limits) : parser(limits) {}
  };

  // --- epoll ---

  void watch(int fd, uint64_t id, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  }

  void set_events(Connection& c, uint64_t id, uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = events;
  }

  // What a connection waits for: bytes to read, but while Serving only up to a bound (more
  // pipelined requests wait in the kernel); writability while bytes wait.
  void update_events(Connection& c, uint64_t id) {
    uint32_t events = EPOLLRDHUP;
    if (c.phase != Phase::Serving || c.in.size() < kReadBufferBytes) events |= EPOLLIN;
    if (c.out_sent < c.out.size() || (c.phase == Phase::Serving && c.answer_waits)) events |= EPOLLOUT;
    set_events(c, id, events);
  }

  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }

  // --- the loop ---

  // One turn at the loop: waits on the sockets until it has found requests for handlers to
  // answer, and returns those; returns none once it has stopped and every answer is out.
  std::vector<LeaderFollowers::Job> lead() {
    std::array<epoll_event, 256> events;
    for (;;) {
      if (stopping_ && accepting_) {
        ::epoll_ctl(epoll_, EPOLL_CTL_DEL, listener_, nullptr);
        accepting_ = false;
      }
      if (stopping_ && close_idle_for_stop()) return {};
      const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                                 static_cast<int>(config_.limits.sweep_interval.count()));
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == kListenerId) {
          accept_all();
        } else if (id == kWakeId) {
          uint64_t count;
          [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
          take_ready_answers();
        } else {
          on_socket_event(id, events[i].events);
        }
      }
      const Clock::time_point now = Clock::now();
      if (now >= next_sweep_) {
        sweep(now);
        next_sweep_ = now + config_.limits.sweep_interval;
        if (listener_paused_ && accepting_) {  // after running out of descriptors
          listener_paused_ = false;
          watch(listener_, kListenerId, EPOLLIN);
        }
      }
      if (!found_.empty()) return std::exchange(found_, {});
    }
  }

  // While stopping: closes connections that wait for a request; true once none serves.
  bool close_idle_for_stop() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      Connection& c = it->second;
      if (c.phase != Phase::Serving && c.out_sent == c.out.size()) {
        close_connection(it++);
      } else {
        ++it;
      }
    }
    return connections_.empty();
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listener_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE) {  // wait for descriptors to free up
          ::epoll_ctl(epoll_, EPOLL_CTL_DEL, listener_, nullptr);
          listener_paused_ = true;
        }
        return;
      }
      std::string peer = peer_address(addr);
      size_t& from_peer = per_client_[peer];
      const bool over_cap = connections_.size() >= config_.limits.max_connections ||
                            from_peer >= config_.limits.max_connections_per_client;
      if (connections_.size() >= config_.limits.max_connections + kOverCapReserve ||
          (over_cap && from_peer >= config_.limits.max_connections_per_client + kOverCapReserve)) {
        ::close(fd);
        if (from_peer == 0) per_client_.erase(peer);
        continue;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // each streamed event goes out at once
      ++from_peer;
      const uint64_t id = next_id_++;
      auto [it, inserted] = connections_.try_emplace(id, config_.limits.parse);
      Connection& c = it->second;
      c.fd = fd;
      c.peer = std::move(peer);
      c.over_cap = over_cap;
      c.since = Clock::now();
      c.events = EPOLLIN | EPOLLRDHUP;
      watch(fd, id, c.events);
    }
  }

  void on_socket_event(uint64_t id, uint32_t events) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    Connection& c = it->second;
    if (events & (EPOLLERR | EPOLLHUP)) return close_connection(it);
    // Any event on a connection being answered looks at the answer first: one complete by now
    // moves the connection on to its next request.
    if ((events & EPOLLOUT) || c.phase == Phase::Serving) {
      if (!write_out(it)) return;
    }
    if (c.phase == Phase::Serving && (events & EPOLLRDHUP)) return close_connection(it);  // the client left mid-answer
    if (events & (EPOLLIN | EPOLLRDHUP)) {
      if (!read_in(it)) return;
    }
  }

  // Reads what the socket has. False when the connection was closed.
  bool read_in(std::unordered_map<uint64_t, Connection>::iterator it) {
    Connection& c = it->second;
    std::array<char, kReadBufferBytes> buffer;
    for (;;) {
      const ssize_t n = ::read(c.fd, buffer.data(), buffer.size());
      if (n > 0) {
        if (c.phase != Phase::Lingering) {
          c.in.append(buffer.data(), static_cast<size_t>(n));
        } else if ((c.dropped_bytes += static_cast<size_t>(n)) > kLingerBytes) {
          close_connection(it);
          return false;
        }
        if (static_cast<size_t>(n) < buffer.size()) break;
        if (c.phase != Phase::Lingering && c.in.size() >= kReadBufferBytes) break;  // parse (or answer) first
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n < 0 && errno == EINTR) continue;
      close_connection(it);  // the client closed (or reset) its side
      return false;
    }
    if (c.phase == Phase::Reading) return parse_in(it);
    // A request waits behind the answer (read before the worker said it was complete): the
    // loop must hear of its end, as nothing else may come on this connection until then.
    if (c.phase == Phase::Serving && !c.in.empty()) c.exchange->wake_when_finished();
    update_events(c, it->first);
    return true;
  }

  // Parses the bytes read so far; dispatches a complete request. False when closed.
  bool parse_in(std::unordered_map<uint64_t, Connection>::iterator it) {
    Connection& c = it->second;
    while (c.phase == Phase::Reading) {
      if (!c.parser.started() && !c.in.empty()) c.since = Clock::now();  // the request's deadline starts
      size_t used = 0;
      const RequestParser::Result r = c.parser.feed(c.in, used);
      c.in.erase(0, used);
      if (r == RequestParser::Result::NeedMore) break;
      if (r == RequestParser::Result::Failed) {
        answer_error_and_close(it, c.parser.error().status, c.parser.error().message);
        return true;
      }
      if (r == RequestParser::Result::Head) {
        if (!on_head(it)) return true;
        continue;  // a body-less request is Done at the next feed
      }
      Request request = c.parser.take_request();
      request.peer = c.peer;
      request.received = c.since;
      dispatch(it, std::move(request));
    }
    update_events(c, it->first);
    return true;
  }

  // A request's head is in: answer early (refused by check_head) or let its body come.
  bool on_head(std::unordered_map<uint64_t, Connection>::iterator it) {
    Connection& c = it->second;
    const Request& head = c.parser.request();
    if (!c.over_cap && hooks_.check_head) {
      if (std::optional<Response> answer = hooks_.check_head(head)) {
        send_now(c, whole_response(*answer, false));
        answered(head, answer->status);
        linger(it);
        return false;
      }
    }
    if (c.parser.expects_continue()) send_now(c, continue_response());
    return true;
  }

  // HEAD is answered by the path's GET route, its body left out (RFC 9110, 9.3.2).
  const Route* find_route(const Request& request, bool* path_known) const {
    *path_known = false;
    const std::string_view method = request.method == "HEAD" ? std::string_view("GET") : request.method;
    for (const Route& r : routes_) {
      if (r.path != request.path) continue;
      *path_known = true;
      if (r.method == method) return &r;
    }
    return nullptr;
  }

  // The answer to a request no handler takes: no such route or method, or a connection past
  // the caps asking for more than the loop answers itself.
  Response refusal(const Request& request, const Route* route, bool path_known) const {
    if (route) return hooks_.error_response(request.path, 503, "too many connections: close some and retry");
    if (path_known)
      return hooks_.error_response(
          request.path, 405, fmt::format("{} {}: this route takes another method", request.method, request.path));
    return hooks_.error_response(request.path, 404, fmt::format("{} {}: unknown route", request.method, request.path));
  }

  void dispatch(std::unordered_map<uint64_t, Connection>::iterator it, Request request) {
    Connection& c = it->second;
    const uint64_t id = it->first;
    bool path_known = false;
    const Route* route = find_route(request, &path_known);
    // HTTP/1.0 clients get one answer a connection (keeping theirs alive needs a header more).
    const bool keep_alive = request.minor_version >= 1 && request.keep_alive() && !stopping_ && !draining_;
    const bool refused_for_drain = route && draining_ && !route->while_draining;
    if (!route || (c.over_cap && !route->on_event_loop) || refused_for_drain) {
      const Response error = refused_for_drain
                                  ? hooks_.error_response(request.path, 503, "the server is shutting down: retry elsewhere")
                                  : refusal(request, route, path_known);
      const bool close = c.over_cap || !keep_alive;
      send_now(c, request.method == "HEAD" ? response_head(error, false, !close) : whole_response(error, !close));
      answered(request, error.status);
      if (close) linger(it);
      return;
    }
    c.phase = Phase::Serving;
    c.answer_waits = false;
    // What the loop still had to write (a 100 Continue) goes first.
    std::string unsent = c.out.substr(c.out_sent);
    c.out.clear();
    c.out_sent = 0;
    c.exchange = std::make_shared<Exchange>(c.fd, std::move(unsent), config_.limits.max_pending_response_bytes,
                                            [this, id] { ready(id); });
    ++in_flight_;
    auto job = [this, exchange = c.exchange, route, keep_alive, request = std::move(request)] {
      struct Done {
        std::atomic<int64_t>& count;
        ~Done() { --count; }
      } done{in_flight_};
      ResponseWriter writer(exchange, keep_alive, request.method == "HEAD");
      try {
        route->handler(request, writer);
      } catch (const std::exception& e) {
        if (!writer.started())
          writer.send(hooks_.error_response(request.path, 500, fmt::format("internal error: {}", e.what())));
      }
      if (!writer.started())
        writer.send(hooks_.error_response(request.path, 500, "internal error: the route gave no answer"));
      writer.finish();
      answered(request, writer.status());
    };
    if (route->on_event_loop) {
      job();
    } else {
      found_.push_back(std::move(job));
    }
    update_events(c, id);
  }

  void answered(const Request& request, int status) {
    if (hooks_.answered) hooks_.answered(request, status);
  }

  // Queues an answer made on the loop (an error, a refusal, 100 Continue) and writes it.
  void send_now(Connection& c, const std::string& bytes) {
    if (c.out_sent == c.out.size()) c.last_write = Clock::now();  // the send deadline starts
    c.out += bytes;
    flush(c);
  }

  // Whether the loop's own answer has waited too long for the client to read it.
  bool own_answer_stalled(const Connection& c, Clock::time_point now) const {
    return c.out_sent < c.out.size() && now - c.last_write > config_.limits.send_timeout;
  }

  void answer_error_and_close(std::unordered_map<uint64_t, Connection>::iterator it, int status,
                              const std::string& message) {
    Connection& c = it->second;
    send_now(c, whole_response(hooks_.error_response(c.parser.request().path, status, message), false));
    // What the log line shows of a request that did not parse: as much as did (not its body).
    const Request& parsed = c.parser.request();
    Request request{.method = parsed.method, .target = parsed.target, .path = parsed.path,
                    .minor_version = parsed.minor_version, .headers = {}, .body = {}, .peer = c.peer,
                    .received = c.since};
    answered(request, status);
    linger(it);
  }

  // The connection ends after what is queued: stop sending, drop what comes, close soon.
  void linger(std::unordered_map<uint64_t, Connection>::iterator it) {
    Connection& c = it->second;
    c.phase = Phase::Lingering;
    c.since = Clock::now();
    c.in.clear();
    if (c.out_sent == c.out.size()) ::shutdown(c.fd, SHUT_WR);
    update_events(c, it->first);
  }

  // Writes what it can without waiting. False on a write error.
  bool flush(Connection& c) {
    const size_t before = c.out_sent;
    if (!send_what_fits(c.fd, c.out, c.out_sent)) return false;
    if (c.out_sent > before) c.last_write = Clock::now();
    if (c.out_sent < c.out.size()) return true;
    c.out.clear();
    c.out_sent = 0;
    return true;
  }

  // Called by an exchange (any thread): its bytes wait for a writable socket, or it is complete.
  void ready(uint64_t id) {
    {
      std::lock_guard lock(ready_mutex_);
      ready_.push_back(id);
    }
    wake();
  }

  void take_ready_answers() {
    std::vector<uint64_t> ids;
    {
      std::lock_guard lock(ready_mutex_);
      ids.swap(ready_);
    }
    for (const uint64_t id : ids) {
      auto it = connections_.find(id);
      if (it != connections_.end()) write_out(it);
    }
  }

  // Writes what waits; once a worker's answer is complete and written, the connection reads
  // its next request (or closes). False when closed.
  bool write_out(std::unordered_map<uint64_t, Connection>::iterator it) {
    Connection& c = it->second;
    if (!flush(c)) {
      close_connection(it);
      return false;
    }
    if (c.out_sent == c.out.size() && c.phase == Phase::Lingering) ::shutdown(c.fd, SHUT_WR);
    if (c.phase == Phase::Serving) {
      const Exchange::Progress answer = c.exchange->flush();
      if (answer.failed) {
        close_connection(it);
        return false;
      }
      c.answer_waits = answer.pending;
      if (answer.finished && !answer.pending) {
        c.exchange.reset();
        if (!answer.keep_alive || stopping_) {
          close_connection(it);
          return false;
        }
        c.phase = Phase::Reading;
        c.since = Clock::now();
        return parse_in(it);  // a pipelined request may be waiting in `in`
      }
    }
    update_events(c, it->first);
    return true;
  }

  // Deadlines: requests too slow to arrive, idle keep-alive connections, answers not read,
  // lingering connections.
  void sweep(Clock::time_point now) {
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto current = it++;
      Connection& c = current->second;
      const auto age = now - c.since;
      switch (c.phase) {
        case Phase::Reading: {
          const auto wait_limit = c.over_cap            ? kOverCapTimeout
                                  : c.parser.started() ? config_.limits.request_timeout
                                                       : config_.limits.idle_timeout;
          if (own_answer_stalled(c, now)) {
            close_connection(current);
          } else if (age > wait_limit && c.parser.started()) {
            answer_error_and_close(current, 408, "the request did not arrive in time");
          } else if (age > wait_limit) {
            close_connection(current);
          }
          break;
        }
        case Phase::Serving: {
          const Exchange::Progress answer = c.exchange->flush();
          if (answer.pending && now - answer.last_write > config_.limits.send_timeout) {
            close_connection(current);
          } else if (answer.finished && !answer.pending) {
            write_out(current);  // complete and written: on to the next request, or closed
          }
          break;
        }
        case Phase::Lingering:
          if (age > kLingerTime || own_answer_stalled(c, now)) close_connection(current);
          break;
      }
    }
  }

  // Closes the socket; a worker still answering on it hears that its client is gone at its
  // next write.
  void close_connection(std::unordered_map<uint64_t, Connection>::iterator it) {
    Connection& c = it->second;
    if (c.exchange) c.exchange->close_socket();  // no worker writes to the descriptor after this
    ::close(c.fd);
    auto peer = per_client_.find(c.peer);
    if (peer != per_client_.end() && --peer->second == 0) per_client_.erase(peer);
    connections_.erase(it);
  }

  const ServerConfig config_;
  const std::vector<Route> routes_;
  const ServerHooks hooks_;
  int listener_ = -1;
  int epoll_ = -1;
  int wake_fd_ = -1;
  bool listener_paused_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> in_flight_{0};  // handlers dispatched that have not returned
  std::unique_ptr<LeaderFollowers> threads_;
  // The loop's own: touched by the leading thread alone (leadership passes under a mutex).
  bool accepting_ = true;
  Clock::time_point next_sweep_;
  std::vector<LeaderFollowers::Job> found_;  // requests found in this turn, for handlers
  std::unordered_map<uint64_t, Connection> connections_;
  std::map<std::string, size_t> per_client_;
  uint64_t next_id_ = 2;
  // Connections whose answers have bytes to write, from the workers.
  std::mutex ready_mutex_;
  std::vector<uint64_t> ready_;
};

Server::Server(ServerConfig config, std::vector<Route> routes, ServerHooks hooks)
    : loop_(std::make_unique<Loop>(std::move(config), std::move(routes), std::move(hooks))) {}

Server::~Server() { stop(); }

int Server::start() { return loop_->start(); }

void Server::drain() { loop_->drain(); }

int64_t Server::in_flight() const { return loop_->in_flight(); }

void Server::stop() { loop_->stop(); }

}  // namespace nanoserve::http
