// What a chat answer reads out of the model's output as it streams: a thinking model's
// reasoning, then the tool calls out of the rest. Every API that answers chats (OpenAI's chat
// completions, Anthropic's messages, the Responses API, Ollama's chat) reads through these and
// writes what they give in its own format.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/harmony_reader.h"
#include "server/reasoning_split.h"
#include "server/tool_calls.h"

namespace nanoserve::server {

struct ChatReaders {
  std::optional<ReasoningSplit> reasoning;
  std::optional<ToolCallReader> tool_calls;
  std::optional<HarmonyReader> harmony;  // gpt-oss: reads reasoning, content and calls alone
};

// What a piece of output gives the answer once the readers have read it.
struct AnswerPieces {
  std::string reasoning, content;
  std::vector<ToolCall> calls;
  bool empty() const { return reasoning.empty() && content.empty() && calls.empty(); }
  // The answer so far, and then `more`.
  void append(AnswerPieces more);
};

// The reasoning split first (a thought may precede a call), then the tool calls out of the
// rest. `last`: the output has ended, so what the readers hold back comes out too.
AnswerPieces read_piece(ChatReaders& readers, std::string_view text, bool last);

}  // namespace nanoserve::server
