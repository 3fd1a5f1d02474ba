// The procedures' constructors, one per kind of measurement (the table is procedure.cpp's).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>

#include "lab/procedure.h"

namespace nanoserve::lab {

std::unique_ptr<Procedure> make_decode_rate(LabContext& lab, const nlohmann::json& parameters);
std::unique_ptr<Procedure> make_streams(LabContext& lab, const nlohmann::json& parameters);
std::unique_ptr<Procedure> make_peak_memory(LabContext& lab, const nlohmann::json& parameters);
std::unique_ptr<Procedure> make_ttft(LabContext& lab, const nlohmann::json& parameters);
std::unique_ptr<Procedure> make_server_overhead(LabContext& lab, const nlohmann::json& parameters);
std::unique_ptr<Procedure> make_prefix_cache(LabContext& lab, const nlohmann::json& parameters);
std::unique_ptr<Procedure> make_speculation(LabContext& lab, const nlohmann::json& parameters);

}  // namespace nanoserve::lab
