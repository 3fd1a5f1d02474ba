// Test helpers for the engine room: read a stream to its end (or many submitted at once, or one
// after another), a golden model's prompts as requests, and a real tokenizer.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "gguf/file.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine::test {

// Everything a stream said, up to and including its final event.
struct StreamRecord {
  std::string text;             // the Text pieces, concatenated
  std::vector<int32_t> tokens;  // their token ids, concatenated
  int text_events = 0;
  Event last;                   // Done or Error
};

// Generous: a stalled stream fails the test instead of hanging it; never a timing assertion.
inline constexpr std::chrono::seconds kPatience{120};

// Throws when no final event comes within `patience` of the previous event.
inline StreamRecord read_to_end(Stream& stream, std::chrono::milliseconds patience = kPatience) {
  StreamRecord record;
  for (;;) {
    std::optional<Event> event = stream.next(patience);
    if (!event) throw std::runtime_error("the stream stalled");
    if (event->kind != Event::Kind::Text) {
      record.last = std::move(*event);
      return record;
    }
    record.text += event->text;
    record.tokens.insert(record.tokens.end(), event->tokens.begin(), event->tokens.end());
    ++record.text_events;
  }
}

// A request for `max_tokens` tokens exactly (greedy unless its sampling is changed).
inline GenerationRequest request(std::vector<int32_t> prompt, int32_t max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

// Submits every request at once, then reads each stream to its end.
inline std::vector<StreamRecord> run_together(Engine& engine, const std::vector<GenerationRequest>& requests) {
  std::vector<std::shared_ptr<Stream>> streams;
  for (const GenerationRequest& r : requests) streams.push_back(engine.submit(r));
  std::vector<StreamRecord> out;
  for (auto& s : streams) out.push_back(read_to_end(*s));
  return out;
}

// Submits each request after the one before has ended.
inline std::vector<StreamRecord> run_alone(Engine& engine, const std::vector<GenerationRequest>& requests) {
  std::vector<StreamRecord> out;
  for (const GenerationRequest& r : requests) out.push_back(read_to_end(*engine.submit(r)));
  return out;
}

// The prompts of a golden model's .json (input_ids of its sequences).
inline std::vector<std::vector<int32_t>> golden_prompts(const std::string& json_path) {
  const auto golden = nlohmann::json::parse(nanoserve::test::read_file(json_path));
  std::vector<std::vector<int32_t>> out;
  for (const auto& seq : golden.at("sequences")) out.push_back(seq.at("input_ids").get<std::vector<int32_t>>());
  return out;
}

// Eight requests of `max_tokens` on a golden model's prompts up to 300 tokens (greedy), then
// seeded sampled ones on growing prefixes of the longest of those.
inline std::vector<GenerationRequest> golden_requests(const std::string& json_path, int32_t max_tokens) {
  std::vector<GenerationRequest> out;
  std::vector<int32_t> longest;
  for (const std::vector<int32_t>& prompt : golden_prompts(json_path)) {
    if (prompt.size() > 300) continue;
    out.push_back(request(prompt, max_tokens));
    longest = prompt;
  }
  for (size_t i = 0; out.size() < 8; ++i) {
    GenerationRequest r = request({longest.begin(), longest.begin() + static_cast<std::ptrdiff_t>(20 + 37 * i)}, max_tokens);
    r.sampling = {.temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 700 + i};
    out.push_back(r);
  }
  return out;
}

// The golden tiny models' vocabulary: ids 0..255 are the single bytes (id b = byte b),
// 1021 <|endoftext|>, 1022 <|im_start|>, 1023 <|im_end|> (eos); all three are control.
inline std::string tiny_model_path() { return nanoserve::test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"); }
inline tokenizer::Tokenizer tiny_tokenizer() {
  return tokenizer::Tokenizer::from_gguf(gguf::File::open(tiny_model_path()).metadata());
}
inline constexpr int32_t kTinyEndOfText = 1021, kTinyEos = 1023;

}  // namespace nanoserve::engine::test
