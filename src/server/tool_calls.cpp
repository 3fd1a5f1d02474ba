#include "server/tool_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "grammar/json_schema.h"
#include "server/api_error.h"
#include "server/request_id.h"
#include "server/text_tags.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>", kPythonTag = "<|python_tag|>";

// A call written as JSON: {"name": ..., "arguments" (Llama 3: "parameters"): {...}}; arguments
// given as a string of JSON are taken as that JSON.
std::optional<ToolCall> call_from_json(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string()) return std::nullopt;
  json arguments = j.contains("arguments") ? j["arguments"] : j.contains("parameters") ? j["parameters"] : json::object();
  if (arguments.is_string()) arguments = json::parse(arguments.get<std::string>(), nullptr, false);
  if (!arguments.is_object()) return std::nullopt;
  return ToolCall{random_request_id("call_"), j["name"].get<std::string>(), arguments.dump()};
}

}  // namespace

ToolSyntax tool_syntax_of(std::string_view source) {
  if (source.find(kCallOpen) != std::string_view::npos) return ToolSyntax::Hermes;
  if (source.find(kPythonTag) != std::string_view::npos || source.find("\"parameters\": ") != std::string_view::npos)
    return ToolSyntax::Llama3;
  return ToolSyntax::Hermes;
}

void ToolCallReader::release_content(Pieces& out, std::string_view text) {
  // Whitespace at the end waits for more content: dropped if a call or the end comes next.
  const size_t last = text.find_last_not_of(" \t\r\n");
  if (last == std::string_view::npos) {
    spaces_ += text;
    return;
  }
  out.content += spaces_;
  out.content += text.substr(0, last + 1);
  spaces_ = text.substr(last + 1);
}

void ToolCallReader::add_call(Pieces& out, ToolCall call) {
  if (parallel_ || calls_ == 0) out.calls.push_back(std::move(call));
  ++calls_;
}

ToolCallReader::Pieces ToolCallReader::push(std::string_view text) {
  Pieces out;
  held_ += text;
  for (;;) {
    switch (state_) {
      case State::Start: {
        held_.erase(0, leading_spaces(held_));
        if (held_.empty()) return out;
        if (syntax_ == ToolSyntax::Llama3) {
          if (held_.starts_with('{') || held_.starts_with(kPythonTag)) {
            state_ = State::WholeJson;
            continue;
          }
          if (kPythonTag.starts_with(held_)) return out;  // perhaps the tag, cut
        }
        state_ = State::Content;
        continue;
      }
      case State::Content: {
        if (syntax_ == ToolSyntax::Llama3) {
          release_content(out, held_);
          held_.clear();
          return out;
        }
        const size_t open = held_.find(kCallOpen);
        if (open != std::string::npos) {
          release_content(out, std::string_view(held_).substr(0, open));
          spaces_.clear();
          held_.erase(0, open + kCallOpen.size());
          state_ = State::InCall;
          continue;
        }
        const size_t keep = partial_tag_at_end(held_, kCallOpen);
        release_content(out, std::string_view(held_).substr(0, held_.size() - keep));
        held_.erase(0, held_.size() - keep);
        return out;
      }
      case State::InCall: {
        const size_t close = held_.find(kCallClose);
        if (close == std::string::npos) return out;
        const std::string body = held_.substr(0, close);
        if (std::optional<ToolCall> call = call_from_json(body))
          add_call(out, std::move(*call));
        else
          release_content(out, std::string(kCallOpen) + body + std::string(kCallClose));
        held_.erase(0, close + kCallClose.size());
        state_ = State::Content;
        continue;
      }
      case State::WholeJson:
        return out;  // read at the end
    }
  }
}

ToolCallReader::Pieces ToolCallReader::finish() {
  Pieces out;
  switch (state_) {
    case State::Start:
      break;
    case State::Content:
      release_content(out, held_);
      break;
    case State::InCall:  // the output ended before </tool_call>: a call if its JSON is whole
      if (std::optional<ToolCall> call = call_from_json(held_))
        add_call(out, std::move(*call));
      else
        release_content(out, std::string(kCallOpen) + held_);
      break;
    case State::WholeJson: {
      std::string_view body = held_;
      if (body.starts_with(kPythonTag)) body.remove_prefix(kPythonTag.size());
      if (std::optional<ToolCall> call = call_from_json(body))
        add_call(out, std::move(*call));
      else
        release_content(out, held_);
      break;
    }
  }
  held_.clear();
  spaces_.clear();
  return out;
}

json parameters_of(const json& function) {
  return function.contains("parameters") ? function["parameters"] : json{{"type", "object"}};
}

uint32_t add_tool_schema_rule(grammar::GrammarBuilder& builder, const json& schema, size_t tool,
                              std::string_view parameters_at) {
  const std::string param = fmt::format("tools[{}].function.parameters", tool);
  try {
    return grammar::add_json_schema_rule(builder, schema);
  } catch (const grammar::SchemaError& e) {
    // A keyword inside the parameters is named by its path there; one outside, by the parameters.
    std::string keyword = param;
    if (parameters_at.empty() && !e.keyword.empty())
      keyword += "." + e.keyword;
    else if (!parameters_at.empty() && e.keyword.starts_with(parameters_at))
      keyword += e.keyword.substr(parameters_at.size());
    throw invalid_request(fmt::format("{}: {}", keyword, e.what()), keyword, "unsupported_schema");
  } catch (const grammar::GrammarTooLarge& e) {
    throw invalid_request(fmt::format("{} is too large to enforce: {}", param, e.what()), param, "schema_too_large");
  }
}

std::shared_ptr<const grammar::Grammar> build_forced_call_grammar(grammar::GrammarBuilder& builder,
                                                                  const grammar::Expr& root) {
  auto grammar = std::make_shared<const grammar::Grammar>(builder.build(builder.add_rule(root)));
  if (grammar->matches_nothing())
    throw invalid_request("no call to the functions tool_choice allows can satisfy their parameters",
                          "tool_choice", "unsupported_schema");
  return grammar;
}

std::shared_ptr<const grammar::Grammar> forced_tool_call_grammar(const json& tools, const ToolChoice& choice,
                                                                 ToolSyntax syntax, bool parallel) {
  using namespace grammar;
  const std::string arguments_key = syntax == ToolSyntax::Hermes ? "arguments" : "parameters";
  GrammarBuilder builder;
  std::vector<Expr> calls;
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& function = tools[i]["function"];
    const std::string name = function["name"].get<std::string>();
    if (choice.kind == ToolChoice::Kind::Function && name != choice.function) continue;
    const json parameters = parameters_of(function);
    json call = {{"type", "object"},
                 {"properties", {{"name", {{"const", name}}}, {arguments_key, parameters}}},
                 {"required", {"name", arguments_key}},
                 {"additionalProperties", false}};
    // $ref "#/$defs/..." in the parameters point at the parameters' own $defs.
    for (const char* defs : {"$defs", "definitions"})
      if (parameters.is_object() && parameters.contains(defs)) call[defs] = parameters[defs];
    calls.push_back(rule_ref(add_tool_schema_rule(builder, call, i, "properties." + arguments_key)));
  }
  Expr one_call = alt(std::move(calls));
  Expr root = one_call;
  if (syntax == ToolSyntax::Hermes) {
    const Expr block = seq({literal("<tool_call>\n"), one_call, literal("\n</tool_call>")});
    root = parallel ? seq({block, star(seq({literal("\n"), block}))}) : block;
  }
  return build_forced_call_grammar(builder, root);
}

json tool_calls_json(const std::vector<ToolCall>& calls) {
  json out = json::array();
  for (const ToolCall& c : calls)
    out.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return out;
}

bool offers_function(const nlohmann::ordered_json& tools, const std::string& name) {
  return std::any_of(tools.begin(), tools.end(), [&](const auto& t) { return t["function"]["name"] == name; });
}

}  // namespace nanoserve::server
