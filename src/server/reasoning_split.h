// A reasoning model's thinking, told from its answer: text between "<think>" (at the start of
// the output, or already opened by the chat template) and "</think>" is reasoning_content;
// what follows is content (the blank lines right after the closing tag dropped). Fed a piece
// at a time, as the engine streams them: a piece that may be the start of a tag is held back
// until the next shows whether it is one.
#pragma once

#include <string>
#include <string_view>

namespace nanoserve::server {

class ReasoningSplit {
 public:
  // `opened`: the prompt ends with "<think>", so the output starts inside the reasoning.
  explicit ReasoningSplit(bool opened) : state_(opened ? State::Reasoning : State::Start) {}

  struct Pieces {
    std::string reasoning, content;
  };
  Pieces push(std::string_view text);
  // The end of the output: what is still held back.
  Pieces finish();

 private:
  enum class State { Start, Reasoning, AfterReasoning, Content };
  State state_;
  std::string held_;
};

}  // namespace nanoserve::server
