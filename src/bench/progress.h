// The suite's progress on the terminal: a bar, the step in hand and an estimate of the time
// left. Work is counted in planned units (about a decode step's worth each); the estimate
// divides the time so far by the units done. On a terminal the line redraws in place; in a
// log (not a tty) a line is printed per step, at most every few seconds.
#pragma once

#include <chrono>
#include <string>

namespace nanoserve::bench {

class Progress {
 public:
  explicit Progress(double planned_units);

  // Done with `units` more; `step` says what is running next.
  void advance(double units, const std::string& step);
  // Says what runs now without counting work (a server starting, a model synthesized).
  void note(const std::string& step);
  // A message on its own line (the bar is redrawn below it).
  void message(const std::string& text);
  void finish();
  // Ends the line where the bar stands (an interrupted run).
  void stop();
  double done() const { return done_; }

  // "1h02m", "3m05s", "12s"
  static std::string duration_text(double seconds);

 private:
  void draw(bool force);

  double planned_, done_ = 0;
  std::string step_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_draw_{};
  bool tty_;
  bool line_open_ = false;
};

}  // namespace nanoserve::bench
