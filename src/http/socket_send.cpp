#include "http/socket_send.h"

#include <sys/socket.h>

#include <cerrno>

namespace nanoserve::http {

bool send_what_fits(int fd, const std::string& bytes, size_t& sent) {
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

}  // namespace nanoserve::http
