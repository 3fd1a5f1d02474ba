// Tool calls: how a model family writes them, reading them out of its output (whole or as it
// streams), and the grammar that makes a model call one (tool_choice "required" or a named
// function) from its first token.
//   Hermes (Qwen2.5, Qwen3 and other templates that speak of <tool_call>):
//     <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>, one block per call
//   Llama 3 (templates with <|python_tag|> or the JSON form): the whole output is
//     {"name": "f", "parameters": {...}}
// (gpt-oss's harmony has its own: harmony_reader.h reads its calls, harmony_tool_grammar.h forces one.)
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace nanoserve::server {

enum class ToolSyntax { Hermes, Llama3 };

// The syntax a chat template's source teaches its model (Hermes when it names neither).
ToolSyntax tool_syntax_of(std::string_view template_source);

struct ToolChoice {
  enum class Kind { Auto, None, Required, Function };
  Kind kind = Kind::Auto;
  std::string function;  // Kind::Function: its name
};

struct ToolCall {
  std::string id;         // "call_" + 24 random letters and digits
  std::string name;
  std::string arguments;  // a JSON object, as text
};

// Reads tool calls out of an output fed a piece at a time. Text outside the calls is content
// (whitespace around the calls dropped); a block whose JSON does not parse stays content. A
// piece that may begin a call is held back until the next shows whether it does. Without
// `parallel` (parallel_tool_calls false) calls after the first are dropped.
class ToolCallReader {
 public:
  explicit ToolCallReader(ToolSyntax syntax, bool parallel = true) : syntax_(syntax), parallel_(parallel) {}

  struct Pieces {
    std::string content;
    std::vector<ToolCall> calls;  // whole calls, in order
  };
  Pieces push(std::string_view text);
  Pieces finish();

 private:
  enum class State { Start, Content, InCall, WholeJson };
  void read_hermes(Pieces& out);
  void release_content(Pieces& out, std::string_view text);
  void add_call(Pieces& out, ToolCall call);

  ToolSyntax syntax_;
  bool parallel_;
  size_t calls_ = 0;  // read so far
  State state_ = State::Start;
  std::string held_;
  std::string spaces_;  // content whitespace not yet released (dropped if nothing follows)
};

// The grammar of one call (or, with `parallel`, one or more calls) to the functions
// `choice` allows among `tools`, each with arguments of its `parameters` schema. Throws
// ApiError (400) naming tools[i].function.parameters.<keyword> for a schema it cannot enforce.
std::shared_ptr<const grammar::Grammar> forced_tool_call_grammar(const nlohmann::ordered_json& tools,
                                                                 const ToolChoice& choice, ToolSyntax syntax,
                                                                 bool parallel);

// The parts every syntax's forced-call grammar shares (harmony_tool_grammar.h too).
// A function's parameters schema (an object of any properties when it names none).
nlohmann::ordered_json parameters_of(const nlohmann::ordered_json& function);
// Adds `schema`, which holds tools[tool]'s parameters at `parameters_at` (its path inside
// `schema`, "" when `schema` is the parameters), as a rule of `builder`. Throws ApiError (400)
// naming tools[tool].function.parameters.<keyword> for a keyword it cannot enforce.
uint32_t add_tool_schema_rule(grammar::GrammarBuilder& builder, const nlohmann::ordered_json& schema, size_t tool,
                              std::string_view parameters_at);
// The grammar of `root`; throws ApiError (400, param tool_choice) when no call can satisfy it.
std::shared_ptr<const grammar::Grammar> build_forced_call_grammar(grammar::GrammarBuilder& builder,
                                                                  const grammar::Expr& root);

// Whether `tools` (the chat form: [{"type": "function", "function": {"name", ...}}]) has a
// function named `name`.
bool offers_function(const nlohmann::ordered_json& tools, const std::string& name);

// The tool_calls array of a message: [{"id", "type": "function", "function": {"name", "arguments"}}].
nlohmann::ordered_json tool_calls_json(const std::vector<ToolCall>& calls);

}  // namespace nanoserve::server
