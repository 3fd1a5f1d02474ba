// The request field response_format: "text" (free output), "json_object" (any JSON object) or
// "json_schema" (JSON that validates against json_schema.schema), compiled to the grammar the
// engine holds the output to (grammar/json_schema.h says which keywords are honoured).
#pragma once

#include <memory>
#include <string>

#include "grammar/grammar.h"
#include "server/json_fields.h"

namespace nanoserve::server {

// Null for "text" or no response_format. Throws ApiError (400) naming the field at fault: a
// schema keyword that is not supported is named with its path inside the schema
// ("response_format.json_schema.schema.properties.age.multipleOf").
std::shared_ptr<const grammar::Grammar> parse_response_format(const FieldReader& fields);

// The grammar of `schema`, given in the field `param` (for other APIs' schema fields: Anthropic's
// output_config.format.schema, the Responses API's text.format.schema, Ollama's format). Throws
// ApiError (400) naming `param` and the keyword's path inside it.
std::shared_ptr<const grammar::Grammar> schema_grammar(const nlohmann::ordered_json& schema, const std::string& param);

}  // namespace nanoserve::server
