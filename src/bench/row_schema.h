// The shape every JSONL row must have (result_row.h writes them): the fields each kind and
// phase carries, and their JSON types. The charts check rows with it before using them;
// tests check what the suite writes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nanoserve::bench {

// What is wrong with `row` ("field 'x' is missing", "field 'y' should be a number"); empty
// when it matches the schema.
std::vector<std::string> schema_problems(const nlohmann::json& row);

}  // namespace nanoserve::bench
