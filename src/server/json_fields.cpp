#include "server/json_fields.h"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "server/api_error.h"

namespace nanoserve::server {
namespace {

ApiError wrong_type(const std::string& param, const char* expected) {
  return invalid_request(fmt::format("'{}' must be {}", param, expected), param, "invalid_type");
}

}  // namespace

nlohmann::ordered_json parse_json_body(const std::string& body, int max_depth) {
  auto bounded_depth = [max_depth](int depth, nlohmann::ordered_json::parse_event_t, nlohmann::ordered_json&) {
    if (depth > max_depth)
      throw invalid_request(fmt::format("the request body nests arrays and objects deeper than {} levels", max_depth),
                            "", "json_too_deep");
    return true;
  };
  try {
    return nlohmann::ordered_json::parse(body, bounded_depth);
  } catch (const nlohmann::ordered_json::parse_error& e) {
    throw invalid_request(fmt::format("the request body is not valid JSON: {}", e.what()), "", "invalid_json");
  }
}

FieldReader::FieldReader(const nlohmann::ordered_json& object, std::string path) : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) {
    if (path_.empty()) throw invalid_request("the request body must be a JSON object", "", "invalid_type");
    throw wrong_type(path_, "an object");
  }
}

std::string FieldReader::param(const std::string& name) const { return path_.empty() ? name : path_ + "." + name; }

const nlohmann::ordered_json* FieldReader::find(const std::string& name) const {
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> FieldReader::number(const std::string& name, double min, double max) const {
  const nlohmann::ordered_json* v = find(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw wrong_type(param(name), "a number");
  const double x = v->get<double>();
  if (!(x >= min && x <= max))
    throw invalid_request(fmt::format("'{}' must be between {} and {}, got {}", param(name), min, max, x), param(name),
                          "out_of_range");
  return x;
}

std::optional<int64_t> FieldReader::integer(const std::string& name, int64_t min, int64_t max) const {
  const nlohmann::ordered_json* v = find(name);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw wrong_type(param(name), "an integer");
  // Unsigned values above INT64_MAX are out of every range we accept.
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw invalid_request(fmt::format("'{}' is too large", param(name)), param(name), "out_of_range");
  const int64_t x = v->get<int64_t>();
  if (x < min || x > max)
    throw invalid_request(fmt::format("'{}' must be between {} and {}, got {}", param(name), min, max, x), param(name),
                          "out_of_range");
  return x;
}

std::optional<bool> FieldReader::boolean(const std::string& name) const {
  const nlohmann::ordered_json* v = find(name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw wrong_type(param(name), "a boolean");
  return v->get<bool>();
}

std::optional<std::string> FieldReader::string(const std::string& name) const {
  const nlohmann::ordered_json* v = find(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw wrong_type(param(name), "a string");
  return v->get<std::string>();
}

const nlohmann::ordered_json* FieldReader::array(const std::string& name) const {
  const nlohmann::ordered_json* v = find(name);
  if (v && !v->is_array()) throw wrong_type(param(name), "an array");
  return v;
}

const nlohmann::ordered_json* FieldReader::object(const std::string& name) const {
  const nlohmann::ordered_json* v = find(name);
  if (v && !v->is_object()) throw wrong_type(param(name), "an object");
  return v;
}

}  // namespace nanoserve::server
