// The named quantities an experiment file may show its reader and use in its formula. Some are
// facts of the model file, some are measured on this machine before the reader predicts (its
// memory bandwidth, a server's prefill rate at a short prompt), and some are the measurement's
// own settings, fitted to the model (its prompt length, its streams), which the procedure
// supplies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::lab {

enum class QuantitySource { Model, Machine, Server, Procedure };

struct QuantityInfo {
  std::string name;
  std::string unit;
  std::string meaning;
  QuantitySource source;
};

const std::vector<QuantityInfo>& quantity_infos();
// nullptr for a name the lab does not know.
const QuantityInfo* find_quantity(std::string_view name);

}  // namespace nanoserve::lab
