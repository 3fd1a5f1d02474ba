// Ctrl-C during a benchmark. The first SIGINT or SIGTERM raises the flag every loop checks
// (the suite stops after the request in flight; rows are flushed one by one, so those
// written are kept) and kills the server processes the suite started, so no request is
// left waiting on them. A second one exits at once.
#pragma once

#include <sys/types.h>

#include <atomic>

namespace nanoserve::bench {

void install_interrupt_handlers();
bool interrupted();
const std::atomic<bool>& interrupt_flag();

// Processes to kill (SIGKILL) on the first interrupt; at most 32 at a time.
void register_child(pid_t pid);
void unregister_child(pid_t pid);

}  // namespace nanoserve::bench
