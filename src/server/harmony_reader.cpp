#include "server/harmony_reader.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "server/request_id.h"
#include "server/text_tags.h"

namespace nanoserve::server {
namespace {

constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>",
                           kEnd = "<|end|>", kCall = "<|call|>", kReturn = "<|return|>";
// What ends a body: its own end, the start of another message, or the ends of the output
// (those end generation, but a client's stop list or max_tokens may show them as text).
constexpr std::array<std::string_view, 4> kBodyEnds = {kEnd, kStart, kCall, kReturn};

// The word after `key` in a header ("<|channel|>final" -> "final"): up to a space, '<' or the end.
std::string word_after(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return "";
  const size_t begin = at + key.size();
  const size_t end = header.find_first_of(" <", begin);
  return std::string(header.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
}

// How many bytes at the end of `text` could begin one of kBodyEnds (held back until more comes).
size_t possible_end_prefix(std::string_view text) {
  size_t keep = 0;
  for (std::string_view end : kBodyEnds) keep = std::max(keep, partial_tag_at_end(text, end));
  return keep;
}

}  // namespace

bool is_harmony_template(std::string_view source) {
  return source.find(kChannel) != std::string_view::npos && source.find(kMessage) != std::string_view::npos;
}

HarmonyReader::Pieces HarmonyReader::push(std::string_view text) {
  Pieces out;
  pending_ += text;
  read(out, false);
  return out;
}

HarmonyReader::Pieces HarmonyReader::finish() {
  Pieces out;
  read(out, true);
  if (state_ == State::Body) end_body(out);
  if (state_ == State::Start || state_ == State::Header) {
    // An unfinished header says nothing the client can use; text that never was one is content.
    if (!pending_.starts_with("<|")) emit(out, pending_);
    pending_.clear();
  }
  return out;
}

void HarmonyReader::read(Pieces& out, bool last) {
  for (;;) {
    if (state_ == State::Start) {
      // A header starts with a marker ("<|channel|>" after the prompt's "<|start|>assistant");
      // anything else means the model is not writing harmony.
      if (pending_.empty()) return;
      const bool may_become_marker = (pending_.size() < kStart.size() && kStart.starts_with(pending_)) ||
                                     (pending_.size() < kChannel.size() && kChannel.starts_with(pending_));
      if (may_become_marker && !last) return;
      state_ = pending_.starts_with(kStart) || pending_.starts_with(kChannel) ? State::Header : State::Plain;
    }
    if (state_ == State::Plain) {
      emit(out, pending_);
      pending_.clear();
      return;
    }
    if (state_ == State::Header) {
      const size_t at = pending_.find(kMessage);
      if (at == std::string::npos) return;
      const std::string_view header = std::string_view(pending_).substr(0, at);
      channel_ = word_after(header, kChannel);
      recipient_ = word_after(header, "to=");
      pending_.erase(0, at + kMessage.size());
      begin_body();
      continue;
    }
    // State::Body: up to the first closing token, else all but what may begin one.
    size_t end = std::string::npos;
    std::string_view closing;
    for (std::string_view candidate : kBodyEnds) {
      const size_t at = pending_.find(candidate);
      if (at < end) end = at, closing = candidate;
    }
    if (end == std::string::npos) {
      const size_t keep = last ? 0 : possible_end_prefix(pending_);
      emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
      pending_.erase(0, pending_.size() - keep);
      return;
    }
    emit(out, std::string_view(pending_).substr(0, end));
    // <|start|> begins the next header; the other closings are read past.
    pending_.erase(0, closing == kStart ? end : end + closing.size());
    end_body(out);
  }
}

void HarmonyReader::begin_body() {
  state_ = State::Body;
  arguments_.clear();
}

void HarmonyReader::end_body(Pieces& out) {
  if (recipient_.starts_with("functions.")) {
    // Arguments that are not a JSON object stay visible, as content, rather than be lost.
    const auto arguments = nlohmann::json::parse(arguments_.empty() ? "{}" : arguments_, nullptr, false);
    if (!arguments.is_object()) {
      out.content += arguments_;
    } else if (parallel_ || calls_ == 0) {
      out.calls.push_back(
          ToolCall{random_request_id("call_"), recipient_.substr(std::string_view("functions.").size()), arguments.dump()});
      ++calls_;
    }
  }
  channel_.clear();
  recipient_.clear();
  arguments_.clear();
  state_ = State::Header;
}

void HarmonyReader::emit(Pieces& out, std::string_view text) {
  if (text.empty()) return;
  if (state_ == State::Plain || state_ == State::Start || state_ == State::Header) {
    out.content += text;
  } else if (!recipient_.empty()) {
    arguments_ += text;  // a message to a tool: its arguments
  } else if (channel_ == "analysis") {
    out.reasoning += text;
  } else {
    out.content += text;  // final, and commentary to the user
  }
}

}  // namespace nanoserve::server
