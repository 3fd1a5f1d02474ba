// Writes to a non-blocking socket what it takes now, for the event loop's own answers and a
// worker's alike.
#pragma once

#include <cstddef>
#include <string>

namespace nanoserve::http {

// Sends bytes[sent..] until the socket is full or all are out, advancing `sent`. False on a
// socket error (the client reset or closed).
bool send_what_fits(int fd, const std::string& bytes, size_t& sent);

}  // namespace nanoserve::http
