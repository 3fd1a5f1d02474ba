#include "server/json_fields.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/api_error.h"

namespace nanoserve::server {
namespace {

using Json = nlohmann::ordered_json;

ApiError wrong_type(const std::string& param, const char* expected) {
  return invalid_request(fmt::format("'{}' must be {}", param, expected), param, "invalid_type");
}

// Builds the body from the parser's events (nlohmann's SAX interface). nlohmann's own builder
// inserts each key of an ordered_json object after a linear search for an equal one, which
// is quadratic in an object's keys: one large logit_bias would hold a server thread for far
// longer than reading its bytes (experiments/serving-notes.md). Here each open
// object indexes its keys in a hash map, so a body parses in time linear in its size. Keys
// keep the order given; a repeated key takes the last value, in the first one's place (as
// nlohmann's builder gives it).
class BodyBuilder {
 public:
  explicit BodyBuilder(int max_depth) : max_depth_(max_depth) {}

  bool null() { return scalar(Json(nullptr)); }
  bool boolean(bool v) { return scalar(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return scalar(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return scalar(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return scalar(Json(v)); }
  bool string(Json::string_t& v) { return scalar(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return scalar(Json::binary(std::move(v))); }  // not in JSON text
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool key(Json::string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw invalid_request(fmt::format("the request body is not valid JSON: {}", e.what()), "", "invalid_json");
  }

  Json take() { return std::move(root_); }

 private:
  struct Open {
    Json* value;
    std::unordered_map<std::string, size_t> keys;  // an object's keys → their index
  };

  // Puts v into the innermost open array or object (under the last key), or makes it the
  // body; returns where it now lives. A container's address stays valid while it is open:
  // only the innermost open container grows.
  Json* place(Json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Open& top = open_.back();
    if (top.value->is_array()) {
      Json::array_t& items = top.value->get_ref<Json::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    // The object's own storage is a vector of (key, value), appended to without ordered_map's search.
    using Entries = std::vector<std::pair<const std::string, Json>>;
    Entries& entries = top.value->get_ref<Json::object_t&>();
    const auto [it, fresh] = top.keys.try_emplace(key_, entries.size());
    if (!fresh) return &(entries[it->second].second = std::move(v));
    entries.emplace_back(key_, std::move(v));
    return &entries.back().second;
  }

  bool scalar(Json&& v) {
    place(std::move(v));
    return true;
  }

  bool open(Json&& container) {
    if (static_cast<int>(open_.size()) >= max_depth_)
      throw invalid_request(fmt::format("the request body nests arrays and objects deeper than {} levels", max_depth_),
                            "", "json_too_deep");
    Json* where = place(std::move(container));
    open_.push_back({where, {}});
    return true;
  }

  bool close() {
    open_.pop_back();
    return true;
  }

  int max_depth_;
  Json root_;
  std::string key_;
  std::vector<Open> open_;
};

}  // namespace

Json parse_json_body(const std::string& body, int max_depth) {
  BodyBuilder builder(max_depth);
  Json::sax_parse(body, &builder);
  return builder.take();
}

void check_size(const nlohmann::ordered_json& list, size_t most, const std::string& param, const std::string& code) {
  if (list.size() > most)
    throw invalid_request(fmt::format("'{}' has {} entries; at most {} are allowed", param, list.size(), most), param,
                          code);
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

std::string FieldReader::required_string(const std::string& name) const {
  auto value = string(name);
  if (!value)
    throw invalid_request(fmt::format("'{}' is required", param(name)), param(name), "missing_required_parameter");
  return *value;
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
