#include "bench/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace nanoserve::bench {
namespace {

constexpr int kBarWidth = 28;

}  // namespace

Progress::Progress(double planned_units) : planned_(std::max(planned_units, 1.0)), tty_(isatty(STDERR_FILENO)) {}

std::string Progress::duration_text(double seconds) {
  const long s = std::max(0L, static_cast<long>(seconds + 0.5));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

void Progress::advance(double units, const std::string& step) {
  done_ = std::min(planned_, done_ + units);
  step_ = step;
  draw(false);
}

void Progress::note(const std::string& step) {
  step_ = step;
  draw(true);
}

void Progress::message(const std::string& text) {
  if (line_open_) std::fputs("\r\033[K", stderr);
  std::fputs((text + "\n").c_str(), stderr);
  line_open_ = false;
  if (tty_) draw(true);
}

void Progress::finish() {
  done_ = planned_;
  draw(true);
  if (line_open_) std::fputs("\n", stderr);
  line_open_ = false;
}

void Progress::stop() {
  if (line_open_) std::fputs("\n", stderr);
  line_open_ = false;
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!tty_ && !force && now - last_draw_ < std::chrono::seconds(5)) return;
  last_draw_ = now;
  const double fraction = done_ / planned_;
  const int filled = static_cast<int>(fraction * kBarWidth);
  const std::string eta = done_ > 0 ? Progress::duration_text(elapsed / done_ * (planned_ - done_)) : "?";
  const std::string line = fmt::format("[{}{}] {:3.0f}%  {} elapsed, ETA {}  {}", std::string(filled, '#'),
                                       std::string(kBarWidth - filled, '.'), 100 * fraction, duration_text(elapsed),
                                       eta, step_);
  if (tty_) {
    std::fputs(("\r\033[K" + line).c_str(), stderr);
    line_open_ = true;
  } else {
    std::fputs((line + "\n").c_str(), stderr);
  }
  std::fflush(stderr);
}

}  // namespace nanoserve::bench
