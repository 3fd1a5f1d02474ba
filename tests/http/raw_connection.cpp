#include "http/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace nanoserve::test {
namespace {

using Clock = std::chrono::steady_clock;

// Where a complete response in `buffer` ends; 0 when it is not complete yet.
size_t response_end(const std::string& buffer) {
  const size_t head_end = buffer.find("\r\n\r\n");
  if (head_end == std::string::npos) return 0;
  const std::string head = buffer.substr(0, head_end + 4);
  size_t at = head_end + 4;
  if (head.find("Transfer-Encoding: chunked") != std::string::npos) {
    for (;;) {
      const size_t line_end = buffer.find("\r\n", at);
      if (line_end == std::string::npos) return 0;
      const size_t size = std::stoul(buffer.substr(at, line_end - at), nullptr, 16);
      at = line_end + 2 + size + 2;
      if (at > buffer.size()) return 0;
      if (size == 0) return at;
    }
  }
  const size_t cl = head.find("Content-Length: ");
  const size_t length = cl == std::string::npos ? 0 : std::stoul(head.substr(cl + 16));
  return buffer.size() >= at + length ? at + length : 0;
}

}  // namespace

RawConnection::RawConnection(int port, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close();
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
}

RawConnection::~RawConnection() { close(); }

void RawConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawConnection::fill(Clock::time_point deadline) {
  if (ended_) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  pollfd p{fd_, POLLIN, 0};
  if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
  char chunk[65536];
  const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
  if (n <= 0) {
    ended_ = true;
    return false;
  }
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

std::string RawConnection::read_response(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (const size_t end = response_end(buffer_)) {
      std::string response = buffer_.substr(0, end);
      buffer_.erase(0, end);
      return response;
    }
    if (!fill(deadline)) return "";
  }
}

std::string RawConnection::read_head(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (const size_t end = buffer_.find("\r\n\r\n"); end != std::string::npos) {
      std::string head = buffer_.substr(0, end + 4);
      buffer_.erase(0, end + 4);
      return head;
    }
    if (!fill(deadline)) return "";
  }
}

bool RawConnection::closed_by_server(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (fill(deadline)) {
  }
  return ended_;
}

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

std::string body_of(const std::string& response) {
  const size_t head_end = response.find("\r\n\r\n");
  if (head_end == std::string::npos) return "";
  std::string body = response.substr(head_end + 4);
  if (response.substr(0, head_end).find("Transfer-Encoding: chunked") == std::string::npos) return body;
  std::string decoded;
  size_t at = 0;
  for (;;) {
    const size_t line_end = body.find("\r\n", at);
    const size_t size = std::stoul(body.substr(at, line_end - at), nullptr, 16);
    if (size == 0) return decoded;
    decoded += body.substr(line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
}

}  // namespace nanoserve::test
