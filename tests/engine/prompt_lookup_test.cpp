// Prompt lookup proposes what followed the longest n-gram (2..4 tokens) that the sequence ends
// with, from its most recent earlier occurrence that has enough tokens after it.
#include <gtest/gtest.h>

#include <vector>

#include "engine/prompt_lookup.h"

namespace nanoserve::engine {
namespace {

using Tokens = std::vector<int32_t>;

TEST(PromptLookup, ProposesWhatFollowedTheEndingEarlier) {
  //                 0  1  2  3  4  5  6  7  8  9
  const Tokens seq = {7, 1, 2, 3, 4, 5, 9, 9, 1, 2};
  EXPECT_EQ(PromptLookup::lookup(seq, 3), (Tokens{3, 4, 5}));
  EXPECT_EQ(PromptLookup::lookup(seq, 1), (Tokens{3}));
  EXPECT_EQ(PromptLookup::lookup(seq, 8), (Tokens{3, 4, 5, 9, 9, 1, 2}));  // up to the end of the sequence
  PromptLookup drafter;
  EXPECT_EQ(drafter.available(seq, 3), 3);
  EXPECT_EQ(drafter.available(seq, 100), 7);
}

TEST(PromptLookup, TheLongestNgramWinsOverAMoreRecentShorterOne) {
  // Ends with 4 5 6: "5 6" recurs at 8..9 (followed by 1), "4 5 6" only at 1..3 (followed by 8).
  const Tokens seq = {0, 4, 5, 6, 8, 8, 3, 3, 5, 6, 1, 2, 4, 5, 6};
  EXPECT_EQ(PromptLookup::lookup(seq, 2), (Tokens{8, 8}));
}

TEST(PromptLookup, TheMostRecentOccurrenceWithEnoughTokensAfterIt) {
  // "1 2" occurs at 0 (then 3 3 3) and at 4 (then 4 4 4): the recent one.
  const Tokens seq = {1, 2, 3, 3, 1, 2, 4, 4, 4, 9, 1, 2};
  EXPECT_EQ(PromptLookup::lookup(seq, 3), (Tokens{4, 4, 4}));
  // In a loop the latest occurrence overlaps the end: an earlier one gives the full draft.
  const Tokens loop = {5, 6, 5, 6, 5, 6, 5, 6};
  EXPECT_EQ(PromptLookup::lookup(loop, 4), (Tokens{5, 6, 5, 6}));
}

TEST(PromptLookup, NothingWhenNoNgramRecursOrNothingIsAsked) {
  EXPECT_TRUE(PromptLookup::lookup(Tokens{1, 2, 3, 4, 5, 6}, 4).empty());
  EXPECT_TRUE(PromptLookup::lookup(Tokens{1, 2, 3, 1}, 4).empty());  // one token is not enough
  EXPECT_TRUE(PromptLookup::lookup(Tokens{1, 2, 1, 2}, 0).empty());
  EXPECT_TRUE(PromptLookup::lookup(Tokens{1}, 4).empty());
  EXPECT_TRUE(PromptLookup::lookup(Tokens{}, 4).empty());
}

TEST(PromptLookup, ProposesForEveryAsk) {
  PromptLookup drafter;
  const Tokens a = {1, 2, 3, 1, 2}, b = {4, 5, 6};
  Tokens out_a = {99}, out_b = {99};
  const std::vector<DraftAsk> asks = {{.slot = 0, .tokens = a, .max = 2, .out = &out_a},
                                      {.slot = 1, .tokens = b, .max = 2, .out = &out_b}};
  EXPECT_EQ(drafter.propose(asks).tokens, 0);
  EXPECT_EQ(out_a, (Tokens{3, 1}));
  EXPECT_TRUE(out_b.empty());
}

}  // namespace
}  // namespace nanoserve::engine
