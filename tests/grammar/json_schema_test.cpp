#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <string>

#include "grammar/grammar_matching.h"

namespace nanoserve::grammar {
namespace {

TEST(JsonSchema, AnObjectWritesItsRequiredPropertiesInOrder) {
  const auto g = schema_grammar(R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},
                                    "required":["name","age"],"additionalProperties":false})");
  EXPECT_TRUE(matches(g, R"({"name":"Ada","age":36})"));
  EXPECT_TRUE(matches(g, "{\n  \"name\": \"Ada\",\n  \"age\": -3\n}"));
  EXPECT_FALSE(matches(g, R"({"age":36,"name":"Ada"})"));
  EXPECT_FALSE(matches(g, R"({"name":"Ada"})"));
  EXPECT_FALSE(matches(g, R"({"name":"Ada","age":36,"x":1})"));
  EXPECT_FALSE(matches(g, R"({"name":"Ada","age":3.5})"));
  EXPECT_FALSE(matches(g, R"({"name":"Ada","age":036})"));
}

TEST(JsonSchema, OptionalPropertiesMayBeLeftOutWithTheirCommas) {
  const auto g = schema_grammar(R"({"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"},
                                    "c":{"type":"boolean"}},"required":["b"]})");
  EXPECT_TRUE(matches(g, R"({"b":null})"));
  EXPECT_TRUE(matches(g, R"({"a":true,"b":null})"));
  EXPECT_TRUE(matches(g, R"({"b":null,"c":false})"));
  EXPECT_TRUE(matches(g, R"({"a":false,"b":null,"c":true})"));
  EXPECT_FALSE(matches(g, R"({,"b":null})"));
  EXPECT_FALSE(matches(g, R"({"a":true})"));
  const auto none_required = schema_grammar(R"({"properties":{"a":{"type":"boolean"},"b":{"type":"null"}}})");
  EXPECT_TRUE(matches(none_required, "{}"));
  EXPECT_TRUE(matches(none_required, R"({"b":null})"));
  EXPECT_FALSE(matches(none_required, R"({"b":null,})"));
}

TEST(JsonSchema, AnObjectWithoutPropertiesTakesAnyMembersOrNone) {
  const auto any = schema_grammar(R"({"type":"object"})");
  EXPECT_TRUE(matches(any, R"({"x":[1,{"y":null}],"z":"w"})"));
  const auto typed = schema_grammar(R"({"type":"object","additionalProperties":{"type":"integer"}})");
  EXPECT_TRUE(matches(typed, R"({"x":1,"y":2})"));
  EXPECT_FALSE(matches(typed, R"({"x":"1"})"));
  const auto closed = schema_grammar(R"({"type":"object","additionalProperties":false})");
  EXPECT_TRUE(matches(closed, "{}"));
  EXPECT_FALSE(matches(closed, R"({"x":1})"));
}

TEST(JsonSchema, ArraysCountTheirItems) {
  const auto g = schema_grammar(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})");
  EXPECT_FALSE(matches(g, "[]"));
  EXPECT_TRUE(matches(g, "[1]"));
  EXPECT_TRUE(matches(g, "[1, 2, 3]"));
  EXPECT_FALSE(matches(g, "[1,2,3,4]"));
  EXPECT_FALSE(matches(g, "[1,]"));
  EXPECT_TRUE(matches(schema_grammar(R"({"type":"array"})"), R"([1,"a",[true]])"));
}

TEST(JsonSchema, StringsCountCharactersNotBytes) {
  const auto g = schema_grammar(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_FALSE(matches(g, "\"a\""));
  EXPECT_TRUE(matches(g, "\"ab\""));
  EXPECT_TRUE(matches(g, "\"\xC3\xA9t\xC3\xA9\""));  // été: 3 characters, 5 bytes
  EXPECT_TRUE(matches(g, R"("a\"b")"));
  EXPECT_TRUE(matches(g, R"("\u00e9a")"));
  EXPECT_FALSE(matches(g, "\"abcd\""));
  EXPECT_FALSE(matches(g, "\"a\nb\""));    // a raw control character
  EXPECT_FALSE(matches(g, "\"a\xC3\""));   // half a character
  EXPECT_FALSE(matches(g, "\"\xED\xA0\x80\""));  // a surrogate written as UTF-8
}

TEST(JsonSchema, EnumAndConstWriteTheirValues) {
  const auto g = schema_grammar(R"({"enum":["red","green",3,null,{"a":[1]}]})");
  for (const char* ok : {R"("red")", R"("green")", "3", "null", R"({"a":[1]})"}) EXPECT_TRUE(matches(g, ok)) << ok;
  EXPECT_FALSE(matches(g, R"("blue")"));
  const auto typed = schema_grammar(R"({"type":"string","enum":["a",1]})");
  EXPECT_TRUE(matches(typed, R"("a")"));
  EXPECT_FALSE(matches(typed, "1"));
  EXPECT_TRUE(matches(schema_grammar(R"({"const":"x\"y"})"), R"("x\"y")"));
}

TEST(JsonSchema, IntegerBoundsAreExact) {
  struct Case {
    const char* schema;
    int64_t lo, hi;
  };
  for (const Case& c : {Case{R"({"type":"integer","minimum":-37,"maximum":125})", -37, 125},
                        Case{R"({"type":"integer","exclusiveMinimum":-1,"exclusiveMaximum":100})", 0, 99},
                        Case{R"({"type":"integer","minimum":7.5,"maximum":19.2})", 8, 19},
                        Case{R"({"type":"integer","minimum":-250,"maximum":-99})", -250, -99},
                        Case{R"({"type":"integer","minimum":0,"maximum":0})", 0, 0}}) {
    const auto g = schema_grammar(c.schema);
    for (int64_t n = -300; n <= 300; ++n)
      EXPECT_EQ(matches(g, std::to_string(n)), n >= c.lo && n <= c.hi) << c.schema << " " << n;
  }
  const auto from = schema_grammar(R"({"type":"integer","minimum":95})");
  EXPECT_FALSE(matches(from, "94"));
  EXPECT_TRUE(matches(from, "95"));
  EXPECT_TRUE(matches(from, "1234567890123456"));
  EXPECT_FALSE(matches(from, "-5"));
}

TEST(JsonSchema, BoundedNumbersStayInsideTheirBounds) {
  const auto g = schema_grammar(R"({"type":"number","minimum":-1.5,"exclusiveMaximum":2})");
  for (const char* ok : {"0", "1", "-1", "0.5", "1.99"}) EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char* bad : {"2", "2.0", "-2", "-1.6", "3", "1e5"}) EXPECT_FALSE(matches(g, bad)) << bad;
  const auto unit = schema_grammar(R"({"type":"number","minimum":0,"maximum":1})");
  EXPECT_TRUE(matches(unit, "0.731"));
  EXPECT_TRUE(matches(unit, "1"));
  EXPECT_FALSE(matches(unit, "1.5"));
  EXPECT_THROW(schema_grammar(R"({"type":"number","minimum":0.2,"maximum":0.4})"), SchemaError);
  const auto free = schema_grammar(R"({"type":"number"})");
  for (const char* ok : {"0", "-12.5e-3", "1E+10", "3.14"}) EXPECT_TRUE(matches(free, ok)) << ok;
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "1e999"}) EXPECT_FALSE(matches(free, bad)) << bad;
}

TEST(JsonSchema, AnyOfRefsAndRecursion) {
  const auto g = schema_grammar(R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
      "next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"]}},
      "$ref":"#/$defs/node"})");
  EXPECT_TRUE(matches(g, R"({"v":1,"next":{"v":2,"next":null}})"));
  EXPECT_FALSE(matches(g, R"({"v":1,"next":{"v":2}})"));
  const auto types = schema_grammar(R"({"type":["string","null"]})");
  EXPECT_TRUE(matches(types, "null"));
  EXPECT_TRUE(matches(types, R"("x")"));
  EXPECT_FALSE(matches(types, "1"));
}

TEST(JsonSchema, PatternsMatchTheDecodedString) {
  const auto g = schema_grammar(R"({"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"})");
  EXPECT_TRUE(matches(g, R"("AB-123")"));
  EXPECT_FALSE(matches(g, R"("AB-12")"));
  EXPECT_FALSE(matches(g, R"("ab-123")"));
  const auto quote = schema_grammar(R"({"type":"string","pattern":"^a\"b\\\\c$"})");
  EXPECT_TRUE(matches(quote, R"("a\"b\\c")"));
  const auto search = schema_grammar(R"({"type":"string","pattern":"ab+"})");
  EXPECT_TRUE(matches(search, R"("xxabbby")"));
  EXPECT_FALSE(matches(search, R"("xxay")"));
  const auto choice = schema_grammar(R"({"type":"string","pattern":"^(?:cat|dog)s?\\.$"})");
  EXPECT_TRUE(matches(choice, R"("dogs.")"));
  EXPECT_FALSE(matches(choice, R"("dogsx")"));
  const auto negated = schema_grammar(R"({"type":"string","pattern":"^[^0-9]+$"})");
  EXPECT_TRUE(matches(negated, "\"\xC3\xA9t\xC3\xA9\\n\""));
  EXPECT_FALSE(matches(negated, R"("a1")"));
}

std::string refused_keyword(const char* schema) {
  try {
    schema_grammar(schema);
  } catch (const SchemaError& e) {
    return e.keyword;
  }
  return "(accepted)";
}

TEST(JsonSchema, WhatItCannotHonourIsRefusedByKeyword) {
  EXPECT_EQ(refused_keyword(R"({"type":"integer","multipleOf":3})"), "multipleOf");
  EXPECT_EQ(refused_keyword(R"({"properties":{"a":{"type":"string","format":"date"}}})"), "properties.a.format");
  EXPECT_EQ(refused_keyword(R"({"type":"string","pattern":"(a)\\1"})"), "pattern");
  EXPECT_EQ(refused_keyword(R"({"type":"string","pattern":"^a","maxLength":3})"), "pattern");
  EXPECT_EQ(refused_keyword(R"({"type":"frog"})"), "type");
  EXPECT_EQ(refused_keyword(R"({"$ref":"#/$defs/missing"})"), "$ref");
  EXPECT_EQ(refused_keyword(R"({"anyOf":[{"type":"string"},{"not":{}}]})"), "anyOf.1.not");
  EXPECT_EQ(refused_keyword(R"({"allOf":[{"type":"string"},{"maxLength":2}]})"), "allOf");
  EXPECT_EQ(refused_keyword(R"({"type":"array","minItems":3,"maxItems":2})"), "maxItems");
  EXPECT_EQ(refused_keyword(R"({"type":"object","title":"x","description":"y"})"), "(accepted)");
  const std::string nested_groups = std::string(100000, '(') + "a" + std::string(100000, ')');
  EXPECT_EQ(refused_keyword(nlohmann::ordered_json({{"type", "string"}, {"pattern", nested_groups}}).dump().c_str()),
            "pattern");
  EXPECT_THROW(schema_grammar(nlohmann::ordered_json({{"type", "string"}, {"pattern", std::string(2'000'000, 'a')}}).dump()),
               GrammarTooLarge);
  std::string deep = "true";
  for (int i = 0; i < 100; ++i) deep = R"({"items":)" + deep + "}";
  EXPECT_EQ(refused_keyword(deep.c_str()).substr(0, 5), "items");
}

// What a fuzzing pass found: keywords beside enum, undescribed required names, bounds the grammar
// cannot write, characters that one escape or one class must not let through.
TEST(JsonSchema, EnumValuesMustAlsoSatisfyTheOtherKeywords) {
  const auto g = schema_grammar(R"({"type":"string","enum":["ab","toolong"],"maxLength":3})");
  EXPECT_TRUE(matches(g, R"("ab")"));
  EXPECT_FALSE(matches(g, R"("toolong")"));
  const auto bounded = schema_grammar(R"({"type":"integer","enum":[1,50],"maximum":10})");
  EXPECT_TRUE(matches(bounded, "1"));
  EXPECT_FALSE(matches(bounded, "50"));
  const auto object = schema_grammar(
      R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"enum":[{"a":1},{"b":2}]})");
  EXPECT_TRUE(matches(object, R"({"a":1})"));
  EXPECT_FALSE(matches(object, R"({"b":2})"));
  EXPECT_EQ(refused_keyword(R"({"type":"string","enum":["cat","dog"],"pattern":"^x"})"), "enum");
}

TEST(JsonSchema, RequiredNamesNotDescribedFollowAdditionalProperties) {
  const auto g = schema_grammar(R"({"type":"object","properties":{"x":{"type":"boolean"}},"required":["x","y"],
                                    "additionalProperties":{"type":"boolean"}})");
  EXPECT_TRUE(matches(g, R"({"x":true,"y":false})"));
  EXPECT_FALSE(matches(g, R"({"x":true,"y":8})"));
  EXPECT_EQ(refused_keyword(R"({"properties":{"x":{}},"required":["y"],"additionalProperties":false})"), "required");
}

TEST(JsonSchema, SchemasNothingCanSatisfyAreRefused) {
  EXPECT_EQ(refused_keyword(R"({"$ref":"#"})"), "");
  EXPECT_EQ(refused_keyword(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})"), "");
  EXPECT_EQ(refused_keyword(R"({"type":"integer","minimum":1e16})"), "");
  EXPECT_EQ(refused_keyword(R"({"type":"integer","maximum":-1e16})"), "");
  EXPECT_TRUE(matches(schema_grammar(R"({"type":"number","minimum":2e15})"), "2000000000000001.5"));
  const auto empty_array = schema_grammar(R"({"type":"array","items":false})");
  EXPECT_TRUE(matches(empty_array, "[]"));
  EXPECT_FALSE(matches(empty_array, "[1]"));
}

TEST(JsonSchema, OneEscapeIsOneCharacterAndNotSpaceIsNoSpaceAtAll) {
  const auto two = schema_grammar(R"({"type":"string","minLength":2,"maxLength":2})");
  EXPECT_TRUE(matches(two, R"("\u00e9\u4e2d")"));
  EXPECT_FALSE(matches(two, R"("\ud83d\ude00")"));  // a surrogate pair: one character, not two
  const auto not_space = schema_grammar(R"({"type":"string","pattern":"^\\S{3}$"})");
  EXPECT_TRUE(matches(not_space, R"("abc")"));
  EXPECT_FALSE(matches(not_space, "\"\xC2\xA0" "ab\""));  // U+00A0 is a space to ECMAScript's \s
  EXPECT_FALSE(matches(schema_grammar(R"({"type":"string","pattern":"^[^\\s]$"})"), "\"\xE3\x80\x80\""));
}

TEST(JsonSchema, AnyJsonObject) {
  const auto g = std::make_shared<const Grammar>(any_json_object_grammar());
  EXPECT_TRUE(matches(g, R"({"a": [1, 2.5, "x", {"b": null}], "c": true})"));
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_FALSE(matches(g, R"({"a":})"));
}

}  // namespace
}  // namespace nanoserve::grammar
