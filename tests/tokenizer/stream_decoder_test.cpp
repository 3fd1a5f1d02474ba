#include "tokenizer/stream_decoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/golden_data.h"
#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    if (c.status != utf8::Status::kValid) return false;
    pos += c.length;
  }
  return true;
}

// Every golden line (emoji, CJK, scripts, ... split across tokens) streamed one id at a time.
TEST(StreamDecoder, OneIdAtATimeEqualsDecodeAndIsAlwaysValidUtf8) {
  for (const auto& family : test::kFamilies) {
    const Tokenizer& tok = test::hf_tokenizer(family);
    size_t split_characters = 0;
    for (const auto& line : test::read_golden_lines(family)) {
      StreamDecoder stream(tok);
      std::string streamed;
      for (const int32_t id : line.ids) {
        const std::string piece = stream.push(id);
        EXPECT_TRUE(is_valid_utf8(piece)) << family << " " << nlohmann::json(line.text).dump();
        if (piece.size() != tok.token_piece(id).size()) ++split_characters;
        streamed += piece;
      }
      streamed += stream.flush();
      EXPECT_EQ(streamed, tok.decode(line.ids)) << family << " " << nlohmann::json(line.text).dump();
    }
    EXPECT_GT(split_characters, 20u) << family;  // the goldens do split characters across tokens
  }
}

TEST(StreamDecoder, HoldsAnUnfinishedCharacterAndReplacesInvalidBytes) {
  const Tokenizer& tok = test::hf_tokenizer("llama3");
  const auto ids = tok.encode("\U0001F600");  // two tokens for Llama 3
  ASSERT_GT(ids.size(), 1u);

  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.flush(), "\uFFFD");  // cut off at the end of the stream
  EXPECT_EQ(stream.flush(), "");

  const int32_t byte_ff = tok.encode("\xFF").at(0);
  EXPECT_EQ(stream.push(byte_ff), "\uFFFD");  // can never start a character: replaced at once
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.push(tok.encode("A").at(0)), "\uFFFDA");
  EXPECT_THROW(stream.push(-1), std::out_of_range);
}

TEST(StreamDecoder, SpecialTokensRenderAsText) {
  const Tokenizer& tok = test::hf_tokenizer("qwen3");
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(151644), "<|im_start|>");
  EXPECT_EQ(stream.push(151667), "<think>");
}

}  // namespace
}  // namespace nanoserve::tokenizer
