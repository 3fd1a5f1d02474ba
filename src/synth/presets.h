// Shapes of real released models, for synthesizing stand-ins with random weights.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"

namespace nanoserve::synth {

// Throws std::invalid_argument listing the known presets when `name` is not one.
model::ModelConfig preset(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace nanoserve::synth
