#include "server/reasoning_split.h"

#include "server/text_tags.h"

namespace nanoserve::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";

}  // namespace

ReasoningSplit::Pieces ReasoningSplit::push(std::string_view text) {
  Pieces out;
  held_ += text;
  for (;;) {
    switch (state_) {
      case State::Start: {
        // Whitespace, then "<think>" or anything else.
        const size_t start = leading_spaces(held_);
        const std::string_view rest = std::string_view(held_).substr(start);
        if (rest.starts_with(kThinkOpen)) {
          held_.erase(0, start + kThinkOpen.size());
          state_ = State::Reasoning;
          continue;
        }
        if (kThinkOpen.starts_with(rest)) return out;  // perhaps the tag, cut: wait for more
        state_ = State::Content;
        continue;
      }
      case State::Reasoning: {
        const size_t close = held_.find(kThinkClose);
        if (close != std::string::npos) {
          out.reasoning += held_.substr(0, close);
          held_.erase(0, close + kThinkClose.size());
          state_ = State::AfterReasoning;
          continue;
        }
        const size_t keep = partial_tag_at_end(held_, kThinkClose);
        out.reasoning += held_.substr(0, held_.size() - keep);
        held_.erase(0, held_.size() - keep);
        return out;
      }
      case State::AfterReasoning: {
        held_.erase(0, leading_spaces(held_));
        if (held_.empty()) return out;
        state_ = State::Content;
        continue;
      }
      case State::Content:
        out.content += held_;
        held_.clear();
        return out;
    }
  }
}

ReasoningSplit::Pieces ReasoningSplit::finish() {
  Pieces out;
  if (state_ == State::Reasoning)
    out.reasoning = std::move(held_);
  else if (state_ != State::AfterReasoning)
    out.content = std::move(held_);  // a start that was only whitespace or a cut "<thi"
  held_.clear();
  return out;
}

}  // namespace nanoserve::server
