#include "server/response_format.h"

#include <fmt/format.h>

#include "grammar/json_schema.h"
#include "server/api_error.h"

namespace nanoserve::server {
namespace {

constexpr const char* kSchemaParam = "response_format.json_schema.schema";

std::shared_ptr<const grammar::Grammar> json_schema_grammar(const FieldReader& format) {
  const nlohmann::ordered_json* spec = format.object("json_schema");
  if (!spec)
    throw invalid_request("'response_format.json_schema' is required when its type is \"json_schema\"",
                          "response_format.json_schema", "missing_required_parameter");
  const FieldReader fields(*spec, "response_format.json_schema");
  const auto name = fields.string("name");
  if (!name || name->empty() || name->size() > 64 ||
      name->find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos)
    throw invalid_request("'response_format.json_schema.name' must be 1 to 64 letters, digits, '_' or '-'",
                          fields.param("name"), name ? "invalid_value" : "missing_required_parameter");
  fields.boolean("strict");  // true or false: the grammar holds the output to the schema either way
  fields.string("description");
  const nlohmann::ordered_json* schema = fields.find("schema");
  if (!schema)
    throw invalid_request("'response_format.json_schema.schema' is required", kSchemaParam,
                          "missing_required_parameter");
  return schema_grammar(*schema, kSchemaParam);
}

}  // namespace

std::shared_ptr<const grammar::Grammar> schema_grammar(const nlohmann::ordered_json& schema, const std::string& param) {
  try {
    return std::make_shared<const grammar::Grammar>(grammar::compile_json_schema(schema));
  } catch (const grammar::SchemaError& e) {
    const std::string at = e.keyword.empty() ? param : fmt::format("{}.{}", param, e.keyword);
    throw invalid_request(fmt::format("{}: {}", at, e.what()), at, "unsupported_schema");
  } catch (const grammar::GrammarTooLarge& e) {
    throw invalid_request(fmt::format("the schema is too large to enforce: {}", e.what()), param, "schema_too_large");
  }
}

std::shared_ptr<const grammar::Grammar> parse_response_format(const FieldReader& fields) {
  const nlohmann::ordered_json* format = fields.object("response_format");
  if (!format) return nullptr;
  const FieldReader reader(*format, "response_format");
  const auto type = reader.string("type");
  if (!type)
    throw invalid_request("'response_format.type' is required", "response_format.type", "missing_required_parameter");
  if (*type == "text") return nullptr;
  if (*type == "json_object") return std::make_shared<const grammar::Grammar>(grammar::any_json_object_grammar());
  if (*type == "json_schema") return json_schema_grammar(reader);
  throw invalid_request("'response_format.type' must be \"text\", \"json_object\" or \"json_schema\"",
                        "response_format.type", "invalid_value");
}

}  // namespace nanoserve::server
