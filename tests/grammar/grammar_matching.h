// Test helpers: whether a grammar matches a whole text, and a schema's grammar.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string_view>

#include "grammar/automaton.h"
#include "grammar/json_schema.h"

namespace nanoserve::grammar {

inline bool matches(std::shared_ptr<const Grammar> g, std::string_view text) {
  Automaton a(std::move(g));
  Automaton::State s = a.start();
  for (char c : text) {
    s = a.next(s, static_cast<uint8_t>(c));
    if (s == Automaton::kDead) return false;
  }
  return a.accepts(s);
}

inline std::shared_ptr<const Grammar> schema_grammar(std::string_view schema_json) {
  return std::make_shared<const Grammar>(compile_json_schema(nlohmann::ordered_json::parse(schema_json)));
}

}  // namespace nanoserve::grammar
