#include "grammar/automaton.h"

#include <gtest/gtest.h>

#include "grammar/grammar_matching.h"

namespace nanoserve::grammar {
namespace {

std::shared_ptr<const Grammar> build(const Expr& e) {
  GrammarBuilder b;
  const uint32_t root = b.add_rule(e);
  return std::make_shared<const Grammar>(b.build(root));
}

TEST(Automaton, ALiteralMatchesItselfAndNothingElse) {
  const auto g = build(literal("abc"));
  EXPECT_TRUE(matches(g, "abc"));
  EXPECT_FALSE(matches(g, "ab"));
  EXPECT_FALSE(matches(g, "abcd"));
  EXPECT_FALSE(matches(g, "abd"));
  EXPECT_FALSE(matches(g, ""));
}

TEST(Automaton, RepeatsHonourTheirCounts) {
  const auto g = build(seq({literal("<"), repeat(literal("ab"), 2, 4), literal(">")}));
  EXPECT_FALSE(matches(g, "<ab>"));
  EXPECT_TRUE(matches(g, "<abab>"));
  EXPECT_TRUE(matches(g, "<ababab>"));
  EXPECT_TRUE(matches(g, "<abababab>"));
  EXPECT_FALSE(matches(g, "<ababababab>"));
  const auto unbounded = build(seq({star(literal("x")), literal(".")}));
  EXPECT_TRUE(matches(unbounded, "."));
  EXPECT_TRUE(matches(unbounded, std::string(10000, 'x') + "."));
}

TEST(Automaton, AStarOfSomethingThatMatchesNothingEndsItsClosure) {
  // (x*)* and (a?)*b: rules that can match the empty string inside loops.
  const auto g = build(seq({star(star(literal("x"))), star(optional(literal("a"))), literal("b")}));
  EXPECT_TRUE(matches(g, "b"));
  EXPECT_TRUE(matches(g, "xxaab"));
  EXPECT_FALSE(matches(g, "axb"));
}

TEST(Automaton, AlternativesThatShareAPrefixStayOpenTogether) {
  const auto g = build(alt({literal("abc"), literal("abd"), literal("a")}));
  EXPECT_TRUE(matches(g, "a"));
  EXPECT_TRUE(matches(g, "abc"));
  EXPECT_TRUE(matches(g, "abd"));
  EXPECT_FALSE(matches(g, "ab"));
}

TEST(Automaton, RecursionNests) {
  GrammarBuilder b;
  const uint32_t nest = b.new_rule();  // nest ::= "(" nest ")" | ""
  b.define(nest, alt({seq({literal("("), rule_ref(nest), literal(")")}), empty()}));
  const auto g = std::make_shared<const Grammar>(b.build(nest));
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "((()))"));
  EXPECT_FALSE(matches(g, "(()"));
  EXPECT_FALSE(matches(g, "())"));
}

TEST(Automaton, LongRunsOfALoopDoNotGrowTheStateCount) {
  const auto g = build(seq({literal("\""), star(bytes(ByteSet::range('a', 'z'))), literal("\"")}));
  Automaton a(g);
  Automaton::State s = a.next(a.start(), '"');
  for (int i = 0; i < 1000; ++i) s = a.next(s, static_cast<uint8_t>('a' + i % 26));
  EXPECT_LE(a.n_states(), 4u);
  EXPECT_TRUE(a.accepts(a.next(s, '"')));
}

TEST(GrammarBuilder, RefusesGrammarsPastItsLimit) {
  GrammarBuilder b;
  EXPECT_THROW(b.add_rule(repeat(literal("abcdefgh"), 2000000, 2000000)), GrammarTooLarge);
}

}  // namespace
}  // namespace nanoserve::grammar
