#include "server/chat_readers.h"

#include <utility>

namespace nanoserve::server {

void AnswerPieces::append(AnswerPieces more) {
  reasoning += more.reasoning;
  content += more.content;
  for (ToolCall& call : more.calls) calls.push_back(std::move(call));
}

AnswerPieces read_piece(ChatReaders& readers, std::string_view text, bool last) {
  AnswerPieces out;
  if (readers.harmony) {
    HarmonyReader::Pieces read = readers.harmony->push(text);
    out = {std::move(read.reasoning), std::move(read.content), std::move(read.calls)};
    if (last) {
      HarmonyReader::Pieces rest = readers.harmony->finish();
      out.append({std::move(rest.reasoning), std::move(rest.content), std::move(rest.calls)});
    }
    return out;
  }
  out.content = text;
  if (readers.reasoning) {
    ReasoningSplit::Pieces split = readers.reasoning->push(text);
    if (last) {
      ReasoningSplit::Pieces rest = readers.reasoning->finish();
      split.reasoning += rest.reasoning;
      split.content += rest.content;
    }
    out.reasoning = std::move(split.reasoning);
    out.content = std::move(split.content);
  }
  if (readers.tool_calls) {
    ToolCallReader::Pieces read = readers.tool_calls->push(out.content);
    if (last) {
      ToolCallReader::Pieces rest = readers.tool_calls->finish();
      read.content += rest.content;
      for (ToolCall& c : rest.calls) read.calls.push_back(std::move(c));
    }
    out.content = std::move(read.content);
    out.calls = std::move(read.calls);
  }
  return out;
}

}  // namespace nanoserve::server
