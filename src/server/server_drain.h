// Stopping a server the way a balancer can follow (rolling restarts): on the first stop signal
// the server drains (/health answers 503 "draining", new requests get 503 at once and their
// connections close, the requests in flight go on) until none is left or the drain's time is up,
// when the generations still streaming end with an error event; then it stops. A second signal
// ends the process at once.
#pragma once

#include <csignal>
#include <chrono>

#include "server/http_server.h"

namespace nanoserve::server {

// Called after the first of `signals` (blocked in every thread) was taken; returns when the
// server has stopped, or ends the process at once (exit status 128 + the signal) on another.
void drain_and_stop(HttpServer& http, const sigset_t& signals, std::chrono::milliseconds timeout);

}  // namespace nanoserve::server
