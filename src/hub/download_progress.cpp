#include "hub/download_progress.h"

#include <fmt/format.h>
#include <unistd.h>

namespace nanoserve::hub {

std::string human_bytes(uint64_t n) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

DownloadProgress::DownloadProgress(std::string label, uint64_t total, uint64_t start, std::FILE* out, Now now)
    : label_(std::move(label)),
      total_(total),
      start_(start),
      out_(out),
      now_(now),
      terminal_(isatty(fileno(out)) == 1),
      began_(now_()),
      last_draw_(began_ - std::chrono::seconds(1)),
      tenths_shown_(total > 0 ? static_cast<int>(start * 10 / total) : 0) {
  if (start > 0)
    fmt::print(out_, "nanoserve: {}: resuming at {} of {}\n", label_, human_bytes(start), human_bytes(total));
}

std::string DownloadProgress::status(uint64_t done) const {
  const double seconds = std::chrono::duration<double>(now_() - began_).count();
  const double rate = seconds > 0 ? static_cast<double>(done - start_) / seconds : 0;
  std::string eta = "--:--";
  if (rate > 0 && total_ >= done) {
    const auto left = static_cast<uint64_t>(static_cast<double>(total_ - done) / rate);
    eta = left >= 3600 ? fmt::format("{}:{:02}:{:02}", left / 3600, left / 60 % 60, left % 60)
                       : fmt::format("{}:{:02}", left / 60, left % 60);
  }
  return fmt::format("{} / {}, {}/s, {} left", human_bytes(done), human_bytes(total_),
                     human_bytes(static_cast<uint64_t>(rate)), eta);
}

void DownloadProgress::update(uint64_t done) {
  if (terminal_) {
    const auto now = now_();
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    // \x1b[K clears what a longer earlier line left on the right.
    fmt::print(out_, "\r{}: {}\x1b[K", label_, status(done));
    std::fflush(out_);
    return;
  }
  const int tenths = total_ > 0 ? static_cast<int>(done * 10 / total_) : 0;
  if (tenths <= tenths_shown_ || tenths >= 10) return;  // 100% is finish()'s line
  tenths_shown_ = tenths;
  fmt::print(out_, "nanoserve: {}: {}% ({})\n", label_, tenths * 10, status(done));
}

DownloadProgress::~DownloadProgress() {
  if (terminal_ && !finished_) std::fputs("\n", out_);
}

void DownloadProgress::finish(uint64_t done) {
  finished_ = true;
  const double seconds = std::chrono::duration<double>(now_() - began_).count();
  fmt::print(out_, "{}nanoserve: {}: {} in {:.1f} s\n", terminal_ ? "\r\x1b[K" : "", label_, human_bytes(done),
             seconds);
}

}  // namespace nanoserve::hub
