// Shapes of real released models, for synthesizing stand-ins with random weights.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"

namespace nanoserve::model {

// Throws std::invalid_argument listing the known presets when `name` is not one.
ModelConfig preset(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace nanoserve::model
