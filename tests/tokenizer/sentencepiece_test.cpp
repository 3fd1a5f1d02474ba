// SentencePiece-style vocabularies (tokenizer.ggml.model "llama"): llama.cpp's own test vectors
// on the real Llama 2 and Phi-3 vocabularies, text back from their ids as Hugging Face decodes
// it, streamed decoding, and the score-ranked merges on a vocabulary small enough to follow.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/file.h"
#include "support/test_paths.h"
#include "tokenizer/golden_data.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::tokenizer {
namespace {

const Tokenizer& gguf_vocab(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  auto& slot = loaded[name];
  if (!slot)
    slot = std::make_unique<Tokenizer>(Tokenizer::from_gguf(
        gguf::File::open(test::shared_path("golden/tokenizer/ggml-vocab-" + name + ".gguf")).metadata()));
  return *slot;
}

class SentencePieceVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(SentencePieceVectors, EncodeAsLlamaCppAndDecodeBack) {
  const Tokenizer& tok = gguf_vocab(GetParam());
  const auto vectors = test::read_llamacpp_vectors(GetParam());
  ASSERT_EQ(vectors.size(), 46u);
  size_t matches = 0;
  for (const auto& v : vectors) {
    const auto ids = tok.encode(v.text, false);  // as llama.cpp's test: raw text, no BOS
    if (ids == v.ids) ++matches;
    else ADD_FAILURE() << nlohmann::json(v.text).dump() << ": ids " << testing::PrintToString(ids) << " expected "
                       << testing::PrintToString(v.ids);
    // The space encoding put in front is gone again, as Hugging Face's Strip decoder drops it.
    EXPECT_EQ(tok.decode(v.ids), v.text) << nlohmann::json(v.text).dump();
  }
  std::cout << "ggml-vocab-" << GetParam() << ": " << matches << "/" << vectors.size() << "\n";
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp, SentencePieceVectors, ::testing::Values("llama-spm", "phi-3"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(SentencePiece, Llama2VocabularyFacts) {
  const Tokenizer& tok = gguf_vocab("llama-spm");
  EXPECT_EQ(tok.vocab().kind, VocabKind::kSentencePiece);
  EXPECT_EQ(tok.n_tokens(), 32000u);
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_id(), 2);
  EXPECT_EQ(tok.vocab().unknown_id, 0);
  EXPECT_TRUE(tok.add_bos());
  EXPECT_TRUE(tok.strips_leading_space());
  EXPECT_EQ(tok.token_type(3), TokenType::kByte);  // <0x00>
  EXPECT_EQ(tok.token_piece(3 + 0x41), "A");
  EXPECT_EQ(tok.token_piece(29871), " ");  // '▁'
  EXPECT_EQ(tok.find_token("\xE2\x96\x81Hello"), 15043);
  EXPECT_EQ(tok.encode("Hello"), (std::vector<int32_t>{15043}));
  // Control tokens in the text: cut out when special tokens are parsed; each run of text after
  // one gets its own '▁'.
  EXPECT_EQ(tok.encode("<s>Hello</s>Hello"), (std::vector<int32_t>{1, 15043, 2, 15043}));
  const auto plain = tok.encode("<s>", false);
  EXPECT_TRUE(std::find(plain.begin(), plain.end(), 1) == plain.end()) << testing::PrintToString(plain);
  EXPECT_EQ(tok.decode(plain), "<s>");
}

TEST(SentencePiece, CharactersWithoutAPieceAreTheirBytes) {
  const Tokenizer& tok = gguf_vocab("llama-spm");
  // U+1F999 (a llama) has no piece: its four bytes' tokens, <0xF0> <0x9F> <0xA6> <0x99>.
  EXPECT_EQ(tok.encode("\xF0\x9F\xA6\x99"), (std::vector<int32_t>{29871, 3 + 0xF0, 3 + 0x9F, 3 + 0xA6, 3 + 0x99}));
  EXPECT_EQ(tok.decode(tok.encode("\xF0\x9F\xA6\x99")), "\xF0\x9F\xA6\x99");
}

TEST(SentencePiece, StreamedTextIsTheDecodedText) {
  const Tokenizer& tok = gguf_vocab("llama-spm");
  for (const std::string text : {"Hello world", " two spaces", "\xF0\x9F\xA6\x99 llamas \xE2\x82\xAC", "\n\nHi"}) {
    const auto ids = tok.encode(text);
    StreamDecoder decoder(tok);
    std::string streamed;
    for (const int32_t id : ids) streamed += decoder.push(id);
    streamed += decoder.flush();
    EXPECT_EQ(streamed, tok.decode(ids)) << text;
    EXPECT_EQ(streamed, text);
  }
}

// A vocabulary to follow by hand: "ab" scores higher than "bc", so "abc" is "ab" + "c"; equal
// scores go to the leftmost pair; a whole word's token wins over its parts only through them.
Vocab small_spm_vocab(bool add_space_prefix) {
  Vocab v;
  v.kind = VocabKind::kSentencePiece;
  v.add_space_prefix = add_space_prefix;
  const std::vector<std::pair<std::string, float>> pieces = {
      {"<unk>", 0}, {"\xE2\x96\x81", -1e9f}, {"a", -1}, {"b", -2}, {"c", -3}, {"ab", -4}, {"bc", -5},
      {"\xE2\x96\x81" "a", -6}, {"cc", -7}, {"xa", -8}, {"x", -9}};
  for (const auto& [piece, score] : pieces) {
    v.tokens.push_back({piece, piece == "<unk>" ? TokenType::kUnknown : TokenType::kNormal});
    v.scores.push_back(score);
  }
  v.unknown_id = 0;
  return v;
}

TEST(SentencePiece, MergesFollowTheScores) {
  const Tokenizer tok(small_spm_vocab(false));
  EXPECT_EQ(tok.encode("abc"), (std::vector<int32_t>{5, 4}));         // ab c
  EXPECT_EQ(tok.encode("bcc"), (std::vector<int32_t>{6, 4}));         // bc c: -5 beats cc's -7
  EXPECT_EQ(tok.encode("cccc"), (std::vector<int32_t>{8, 8}));        // leftmost first among equals
  EXPECT_EQ(tok.encode("xab"), (std::vector<int32_t>{10, 5}));        // ab (-4) before xa (-8)
  EXPECT_EQ(tok.encode("a a"), (std::vector<int32_t>{2, 7}));         // a ▁a
  EXPECT_EQ(tok.encode("qa"), (std::vector<int32_t>{0, 2}));          // no piece, no byte tokens: <unk>
  EXPECT_EQ(tok.encode("qqa"), (std::vector<int32_t>{0, 2}));         // unknowns in a row are one
  const Tokenizer prefixed(small_spm_vocab(true));
  EXPECT_EQ(prefixed.encode("a"), (std::vector<int32_t>{7}));         // ▁a
  EXPECT_EQ(prefixed.decode(std::vector<int32_t>{7, 7}), "a a");
}

}  // namespace
}  // namespace nanoserve::tokenizer
