// Typed reads of a request object's optional fields. A field of the wrong type or out of
// range throws invalid_request naming it ("temperature", "messages[2].content"); null counts
// as absent, as in OpenAI's API. Fields the reader is not asked about are ignored.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace nanoserve::server {

// The request body as JSON (keys in the order given: chat templates print tool schemas), in
// time linear in its size however many keys an object has. Malformed JSON, or more than
// `max_depth` nested arrays and objects (copying and printing JSON recurse), throws
// invalid_request (400).
nlohmann::ordered_json parse_json_body(const std::string& body, int max_depth);

// Throws invalid_request (`code`) when `list` has more than `most` entries.
void check_size(const nlohmann::ordered_json& list, size_t most, const std::string& param, const std::string& code);

class FieldReader {
 public:
  // `object` must outlive the reader; `path` prefixes the names in errors ("messages[2]").
  // Throws invalid_request when `object` is not a JSON object.
  FieldReader(const nlohmann::ordered_json& object, std::string path = "");

  // The field as given, or nullptr when absent or null.
  const nlohmann::ordered_json* find(const std::string& name) const;

  std::optional<double> number(const std::string& name, double min, double max) const;
  std::optional<int64_t> integer(const std::string& name, int64_t min, int64_t max) const;
  std::optional<bool> boolean(const std::string& name) const;
  std::optional<std::string> string(const std::string& name) const;
  // A string field that must be there.
  std::string required_string(const std::string& name) const;
  // The field when it is an array / object (nullptr when absent); another type throws.
  const nlohmann::ordered_json* array(const std::string& name) const;
  const nlohmann::ordered_json* object(const std::string& name) const;

  // "path.name", or "name" at the top level: the `param` of an error about the field.
  std::string param(const std::string& name) const;

 private:
  const nlohmann::ordered_json& object_;
  std::string path_;
};

}  // namespace nanoserve::server
