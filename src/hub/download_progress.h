// A download's progress on stderr. On a terminal: one line, redrawn in place at most ten times a
// second, with bytes done of the total, the rate and the time left. Elsewhere (a log, a pipe):
// a line at each tenth of the file, so logs stay short.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nanoserve::hub {

class DownloadProgress {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = Clock::time_point (*)();  // the clock it reads (a test's own, to redraw on its time)

  // `start` bytes are already there (a resumed download); the rate counts only new ones.
  DownloadProgress(std::string label, uint64_t total, uint64_t start, std::FILE* out = stderr,
                   Now now = &Clock::now);
  // Ends the terminal's line when finish() did not (a failed download), so a message can follow.
  ~DownloadProgress();
  DownloadProgress(const DownloadProgress&) = delete;
  DownloadProgress& operator=(const DownloadProgress&) = delete;
  // `done` bytes of the whole file are there now.
  void update(uint64_t done);
  // Ends the terminal's line; says how much was fetched and how fast.
  void finish(uint64_t done);

 private:
  std::string status(uint64_t done) const;

  std::string label_;
  uint64_t total_, start_;
  std::FILE* out_;
  Now now_;
  bool terminal_;
  Clock::time_point began_, last_draw_;
  int tenths_shown_;  // lines written so far, when not a terminal
  bool finished_ = false;
};

// "531.1 MB" (powers of 1000, as the Hub shows sizes).
std::string human_bytes(uint64_t n);

}  // namespace nanoserve::hub
