#include <gtest/gtest.h>

#include "tokenizer/golden_data.h"
#include "tokenizer/nfc.h"
#include "tokenizer/unicode.h"

namespace nanoserve::tokenizer {
namespace {

TEST(Nfc, ComposesDecomposesAndReorders) {
  EXPECT_EQ(nfc_normalize("e\u0301"), "\u00E9");                    // combining acute composes
  EXPECT_EQ(nfc_normalize("\u2126"), "\u03A9");                     // OHM SIGN is a singleton
  EXPECT_EQ(nfc_normalize("\u212A"), "K");                          // KELVIN SIGN
  EXPECT_EQ(nfc_normalize("\u1112\u1161\u11AB"), "\uD55C");         // Hangul L V T jamo
  EXPECT_EQ(nfc_normalize("\uD558\u11AB"), "\uD55C");               // LV syllable + T
  EXPECT_EQ(nfc_normalize("s\u0307\u0323"), "\u1E69");              // marks reordered, then composed
  EXPECT_EQ(nfc_normalize("q\u0307\u0323"), "q\u0323\u0307");       // reordered, nothing to compose
  EXPECT_EQ(nfc_normalize("a\u0301\u0301"), "\u00E1\u0301");        // the second acute is blocked
  EXPECT_EQ(nfc_normalize("\u0958"), "\u0915\u093C");               // composition exclusion
  EXPECT_EQ(nfc_normalize("\u0344"), "\u0308\u0301");               // non-starter decomposition
  EXPECT_EQ(nfc_normalize("\u1E9B\u0323"), "\u1E9B\u0323");         // UAX #15 example
  EXPECT_EQ(nfc_normalize("\u0301e"), "\u0301e");                   // no starter before the mark
  EXPECT_EQ(nfc_normalize("e\xFF\u0301"), "e\xFF\u0301");           // a raw byte blocks composition
  EXPECT_EQ(nfc_normalize(""), "");
}

TEST(Nfc, QuickCheckSkipsTextThatIsAlreadyNfc) {
  EXPECT_FALSE(may_need_nfc("plain ASCII text, code(); \xC3\xA9 caf\u00E9 \u4E2D\u6587 \U0001F600"));
  EXPECT_FALSE(may_need_nfc("\xFF\xFE invalid bytes"));
  EXPECT_TRUE(may_need_nfc("e\u0301"));
  EXPECT_TRUE(may_need_nfc("\u2126"));
  EXPECT_TRUE(may_need_nfc("\u1100\u1161"));  // a V jamo may combine with what precedes
}

// Qwen's golden `decoded` is the NFC form of the text (its tokenizer.json normalizes).
TEST(Nfc, MatchesTheQwenGoldenDecodes) {
  size_t changed = 0;
  for (const auto& line : test::read_golden_lines("qwen3")) {
    EXPECT_EQ(nfc_normalize(line.text), line.decoded) << line.category;
    if (line.text != line.decoded) {
      ++changed;
      EXPECT_TRUE(may_need_nfc(line.text)) << line.category;
    }
  }
  EXPECT_GT(changed, 3u);
}

TEST(Nfc, UnicodeVersionOfTheTables) { EXPECT_EQ(unicode_version(), "14.0.0"); }

}  // namespace
}  // namespace nanoserve::tokenizer
