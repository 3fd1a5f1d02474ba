// gpt-oss's harmony format, read back into an answer's fields. The model writes messages, each
// a header and a body: "<|channel|>analysis<|message|>...<|end|>" is its reasoning,
// "<|start|>assistant<|channel|>final<|message|>..." its answer (content), and a message to a
// recipient, "<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}", a call
// of tool NAME with those arguments (the output then ends with <|call|>). Commentary to no one
// is content too. Output that does not start with a header (a model that ignores the format)
// is content as it is. Fed a piece at a time, as the engine streams them: a header is held
// until its <|message|>, and the end of a body until it is clear it is not a closing token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/tool_calls.h"

namespace nanoserve::server {

// Whether a chat template speaks harmony (it writes <|channel|> and <|message|>).
bool is_harmony_template(std::string_view template_source);

class HarmonyReader {
 public:
  // Without `parallel` (parallel_tool_calls false) calls after the first are dropped.
  explicit HarmonyReader(bool parallel = true) : parallel_(parallel) {}

  struct Pieces {
    std::string reasoning, content;
    std::vector<ToolCall> calls;
  };
  Pieces push(std::string_view text);
  // The end of the output: a body still open ends there (a call's arguments with it).
  Pieces finish();

 private:
  enum class State { Start, Header, Body, Plain };
  void read(Pieces& out, bool last);
  void begin_body();
  void end_body(Pieces& out);
  void emit(Pieces& out, std::string_view text);

  bool parallel_;
  State state_ = State::Start;
  std::string pending_;    // text not read yet (a header, or what may begin a closing token)
  std::string channel_;    // the current message's
  std::string recipient_;  // "functions.NAME" for a call, else empty
  std::string arguments_;  // a call's body so far
  size_t calls_ = 0;
};

}  // namespace nanoserve::server
