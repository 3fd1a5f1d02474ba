// JSON Schema to grammar: the grammar of JSON texts that validate against a schema, for
// response_format json_schema and tool arguments.
//
// Supported: type (one or a list), enum, const; object: properties (written in their order),
// required, additionalProperties (false, true or a schema; extra properties are generated
// only when no properties are declared, so that one never repeats a declared name); array:
// items, minItems, maxItems; string: minLength, maxLength (in characters), pattern (regex.h;
// not together with a length); integer and number: minimum, maximum, exclusiveMinimum,
// exclusiveMaximum; anyOf, oneOf (alternatives: oneOf's "exactly one" is the schema author's
// to keep), allOf of one schema; $ref to "#", "#/$defs/..." or "#/definitions/..." (recursion
// allowed). Annotations (title, description, default, examples, $schema, $id, $comment,
// deprecated, readOnly, writeOnly) are read past. Every other keyword is refused, never
// ignored: a grammar that left it out could write output that does not validate.
//
// What the grammar writes is a subset of what validates: no whitespace but " " or a newline
// and indentation, numbers of bounded length, declared properties in their order.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <stdexcept>
#include <string>

#include "grammar/grammar.h"

namespace nanoserve::grammar {

// A schema the compiler cannot honour: `keyword` is the path to the keyword at fault inside
// the schema ("properties.age.multipleOf"; "" for the schema itself).
struct SchemaError : std::invalid_argument {
  SchemaError(std::string keyword, const std::string& message)
      : std::invalid_argument(message), keyword(std::move(keyword)) {}
  std::string keyword;
};

// Deepest nesting of schemas inside schemas.
inline constexpr int kMaxSchemaDepth = 64;

// Throws SchemaError, or GrammarTooLarge when the schema asks for too large a grammar.
Grammar compile_json_schema(const nlohmann::ordered_json& schema);
// The same as a rule of `builder`, to be part of a larger grammar (a tool call's JSON inside
// its tags). `schema` must outlive the call only.
uint32_t add_json_schema_rule(GrammarBuilder& builder, const nlohmann::ordered_json& schema);
// Any JSON object (response_format json_object).
Grammar any_json_object_grammar();

}  // namespace nanoserve::grammar
