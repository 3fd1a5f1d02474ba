// The measurement procedures experiment files name ("measurement": {"procedure": "ttft", ...}):
// each is C++ that knows how to measure one kind of thing, with parameters the file may set.
// A procedure first plans (its lengths fitted to the model: quantities shown to the reader
// before the prediction), then measures one or more points; the first point is the
// experiment's answer, the others are shown beside it (the 16k prompt beside the 4k one, the
// sequential engine beside the batch one). A point binds variables that the formula reads in
// place of the inputs of the same name, so one formula gives every point's first-principles value.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lab/lab_context.h"

namespace nanoserve::lab {

struct Point {
  std::string label{};                        // "4096 tokens", "batch", "--spec off"
  std::map<std::string, double> variables{};  // bound in the formula for this point
  double measured = 0;                      // in the experiment's unit
  nlohmann::ordered_json details = nlohmann::ordered_json::object();  // its sub-measurements
};

struct Measurement {
  std::vector<Point> points{};  // the first is the answer
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  std::vector<std::string> notes{};  // what the reader should know about how it was measured
};

class Procedure {
 public:
  virtual ~Procedure() = default;
  // Quantities the procedure knows before measuring (named in its ProcedureInfo::supplies).
  virtual std::map<std::string, double> known() const = 0;
  // Lengths fitted to the model's context and the like, said before the prediction.
  virtual std::vector<std::string> plan_notes() const { return notes_; }
  virtual Measurement measure(LabContext& lab) = 0;

 protected:
  std::vector<std::string> notes_;
};

struct ProcedureInfo {
  std::string name;
  std::string summary;
  // Its parameters with their default values; a file may set any of them, with a value of the
  // same JSON kind (a number, a list of numbers, a string).
  nlohmann::json defaults;
  std::vector<std::string> supplies;   // quantities known() returns
  std::vector<std::string> variables;  // names its points bind
  // `parameters`: the defaults with the file's values laid over them.
  std::function<std::unique_ptr<Procedure>(LabContext&, const nlohmann::json& parameters)> make;
};

const std::vector<ProcedureInfo>& procedure_infos();
const ProcedureInfo* find_procedure(const std::string& name);

}  // namespace nanoserve::lab
