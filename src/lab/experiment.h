// One experiment, as its file in experiments/ states it (see experiments/README.md): the
// question, the quantities the reader is shown, the measurement (a procedure and its
// parameters), the first-principles formula, and the explanation of the usual gaps.
// Everything is checked when the file is read, before anything is measured: a mistake names
// the file and the field (and, in a formula, the offset).
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lab/expression.h"

namespace nanoserve::lab {

struct ExperimentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Experiment {
  std::string file;  // where it was read from, for messages
  std::string id;    // the file's name without .json
  int order = 0;     // its place in `nanoserve lab all` and the list
  std::string title;
  std::string question;  // may name inputs as {name}: their values are put in
  std::string unit;
  std::vector<std::string> inputs;
  std::string procedure;
  nlohmann::json parameters;  // the procedure's defaults with the file's values laid over them
  Expression first_principles;
  std::string explanation;
};

// Throws ExperimentError naming `file` and the field at fault.
Experiment parse_experiment(std::string_view text, const std::string& file);

// The experiments of `dir` (every *.json), or those built into the binary when `dir` is empty,
// in their order.
std::vector<Experiment> load_experiments(const std::string& dir);

}  // namespace nanoserve::lab
