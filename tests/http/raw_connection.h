// A TCP connection that sends exactly the bytes a test gives (malformed ones too) and reads
// answers back, for testing an HTTP server below what an HTTP client library would send.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace nanoserve::test {

class RawConnection {
 public:
  // Connects to 127.0.0.1:port; throws when it cannot. A small `receive_buffer` (bytes)
  // makes a client that reads slowly.
  explicit RawConnection(int port, int receive_buffer = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool send(std::string_view bytes);  // false once the server closed or reset
  // One whole response (head, then a Content-Length or chunked body); "" when the
  // connection ends or `timeout` passes first.
  std::string read_response(std::chrono::milliseconds timeout);
  // The head of an answer that has no body (to HEAD), up to its blank line; "" as above.
  std::string read_head(std::chrono::milliseconds timeout);
  // Whether the server closes the connection within `timeout` (bytes before its end are read
  // and kept for read_response).
  bool closed_by_server(std::chrono::milliseconds timeout);
  void close();

 private:
  bool fill(std::chrono::steady_clock::time_point deadline);  // reads more; false on end or timeout

  int fd_ = -1;
  std::string buffer_;
  bool ended_ = false;
};

// The status code of a response ("HTTP/1.1 200 OK..."); 0 when there is none.
int status_of(const std::string& response);
// Its body (after the blank line; chunked bodies are decoded).
std::string body_of(const std::string& response);

}  // namespace nanoserve::test
