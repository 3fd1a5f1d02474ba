#include "server/harmony_tool_grammar.h"

#include <string>
#include <vector>

#include "grammar/special_token.h"

namespace nanoserve::server {

std::shared_ptr<const grammar::Grammar> forced_harmony_call_grammar(const nlohmann::ordered_json& tools,
                                                                    const ToolChoice& choice) {
  using namespace grammar;
  GrammarBuilder builder;
  std::vector<Expr> calls;
  for (size_t i = 0; i < tools.size(); ++i) {
    const auto& function = tools[i]["function"];
    const std::string name = function["name"].get<std::string>();
    if (choice.kind == ToolChoice::Kind::Function && name != choice.function) continue;
    // The space ends the name (one name may begin another), as gpt-oss writes it.
    calls.push_back(seq({literal(name + " "), special_token("<|constrain|>"), literal("json"),
                         special_token("<|message|>"),
                         rule_ref(add_tool_schema_rule(builder, parameters_of(function), i, ""))}));
  }
  const Expr root = seq({special_token("<|channel|>"), literal("commentary to=functions."), alt(std::move(calls))});
  return build_forced_call_grammar(builder, root);
}

}  // namespace nanoserve::server
