// What one experiment found: the inputs shown, the reader's prediction, and each point's
// first-principles value beside its measurement.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lab/experiment.h"
#include "lab/procedure.h"

namespace nanoserve::lab {

struct PointResult {
  Point point;
  double first_principles = 0;
};

struct Result {
  const Experiment* experiment = nullptr;
  std::vector<std::pair<std::string, double>> inputs{};  // in the file's order
  std::optional<double> prediction{};
  std::vector<PointResult> points{};  // the first is the answer
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  std::vector<std::string> plan_notes{};         // said with the question (lengths fitted to the context)
  std::vector<std::string> measurement_notes{};  // said with the result

  double first_principles() const { return points.front().first_principles; }
  double measured() const { return points.front().point.measured; }
};

}  // namespace nanoserve::lab
