#include "server/logprobs_json.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "utf8/utf8.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;

json byte_values(const std::string& bytes) {
  std::vector<int> out;
  for (char c : bytes) out.push_back(static_cast<unsigned char>(c));
  return out;
}

// A token's text; a token that is not whole UTF-8 characters (a piece of one) is written as
// OpenAI writes it, "bytes:\\xe2\\x80", so that it stays tellable from another piece.
std::string token_text(const std::string& bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const utf8::Char c = utf8::decode(bytes, i);
    if (c.status != utf8::Status::kValid) {
      std::string out = "bytes:";
      for (unsigned char b : bytes) out += fmt::format("\\x{:02x}", b);
      return out;
    }
    i += c.length;
  }
  return bytes;
}

json chat_entry(const engine::TokenProbability& p) {
  return {{"token", token_text(p.bytes)}, {"logprob", p.logprob}, {"bytes", byte_values(p.bytes)}};
}

}  // namespace

size_t utf8_characters(std::string_view bytes) {
  size_t n = 0;
  for (char c : bytes) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

json chat_logprobs_json(std::span<const engine::TokenLogprobs> tokens, size_t /*text_offset*/) {
  json content = json::array();
  for (const engine::TokenLogprobs& t : tokens) {
    json entry = chat_entry(t.chosen);
    json top = json::array();
    for (const engine::TokenProbability& p : t.top) top.push_back(chat_entry(p));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

json completion_logprobs_json(std::span<const engine::TokenLogprobs> tokens, size_t text_offset) {
  json text = json::array(), logprob = json::array(), top = json::array(), offset = json::array();
  for (const engine::TokenLogprobs& t : tokens) {
    text.push_back(token_text(t.chosen.bytes));
    logprob.push_back(t.chosen.logprob);
    json alternatives = json::object();
    for (const engine::TokenProbability& p : t.top) alternatives[token_text(p.bytes)] = p.logprob;
    top.push_back(std::move(alternatives));
    offset.push_back(text_offset);
    text_offset += utf8_characters(t.chosen.bytes);
  }
  return {{"tokens", std::move(text)}, {"token_logprobs", std::move(logprob)}, {"top_logprobs", std::move(top)},
          {"text_offset", std::move(offset)}};
}

}  // namespace nanoserve::server
