// StopMatcher: stop strings cut the text, even when they arrive split across pieces, and
// text that only looked like the start of one comes out unchanged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/stop_matcher.h"

namespace nanoserve::engine {
namespace {

struct Fed {
  std::vector<std::string> released;  // per piece
  bool stopped = false;
  std::string total;  // everything released, the final release() included
};

Fed feed(std::vector<std::string> stops, const std::vector<std::string>& pieces) {
  StopMatcher m(std::move(stops));
  Fed out;
  for (const std::string& p : pieces) {
    StopMatcher::Result r = m.push(p);
    out.released.push_back(r.text);
    out.total += r.text;
    if (r.stopped) {
      out.stopped = true;
      break;
    }
  }
  if (!out.stopped) out.total += m.release();
  return out;
}

TEST(StopMatcher, NoStopsReleasesEverythingAtOnce) {
  const Fed f = feed({}, {"Hello", " world"});
  EXPECT_EQ(f.released, (std::vector<std::string>{"Hello", " world"}));
  EXPECT_EQ(f.total, "Hello world");
}

TEST(StopMatcher, StopWithinOnePieceCutsBeforeIt) {
  const Fed f = feed({"STOP"}, {"say STOP now"});
  EXPECT_TRUE(f.stopped);
  EXPECT_EQ(f.total, "say ");
}

TEST(StopMatcher, StopSplitAcrossPiecesIsHeldBackThenCut) {
  const Fed f = feed({"STOP"}, {"say S", "T", "O", "P and more"});
  EXPECT_TRUE(f.stopped);
  EXPECT_EQ(f.released, (std::vector<std::string>{"say ", "", "", ""}));
  EXPECT_EQ(f.total, "say ");
}

TEST(StopMatcher, PrefixThatIsNoStopIsReleasedIntact) {
  const Fed f = feed({"STOP"}, {"say S", "T", "O", "rm", " over"});
  EXPECT_FALSE(f.stopped);
  EXPECT_EQ(f.released, (std::vector<std::string>{"say ", "", "", "STOrm", " over"}));
  EXPECT_EQ(f.total, "say STOrm over");
}

TEST(StopMatcher, HeldBackTextComesOutAtTheEnd) {
  const Fed f = feed({"STOP"}, {"the end ST"});
  EXPECT_EQ(f.released, std::vector<std::string>{"the end "});
  EXPECT_EQ(f.total, "the end ST");
}

TEST(StopMatcher, StopAtTheVeryStart) {
  const Fed f = feed({"Q:"}, {"Q", ": what"});
  EXPECT_TRUE(f.stopped);
  EXPECT_EQ(f.released, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(f.total, "");
}

TEST(StopMatcher, TheEarliestOfSeveralStopsWins) {
  EXPECT_EQ(feed({"world", "lo w"}, {"hel", "lo world"}).total, "hel");
  EXPECT_EQ(feed({"\n\n", "END"}, {"one END two\n\n"}).total, "one ");
  EXPECT_EQ(feed({"\n\n", "END"}, {"one\n", "\ntwo END"}).total, "one");
}

TEST(StopMatcher, HoldsBackTheLongestPossibleStart) {
  // "aab" inside "aaab": after "aaa" only the last two letters can still start it.
  const Fed f = feed({"aab"}, {"a", "a", "a", "b"});
  EXPECT_EQ(f.released, (std::vector<std::string>{"", "", "a", ""}));
  EXPECT_TRUE(f.stopped);
  EXPECT_EQ(f.total, "a");
}

TEST(StopMatcher, MultiByteStopsAndText) {
  // "é" is C3 A9; a stop that starts with it holds back whole characters only.
  EXPECT_EQ(feed({"é!"}, {"caf", "é", "!"}).total, "caf");
  const Fed f = feed({"é!"}, {"caf", "é", " au lait 🙂"});
  EXPECT_EQ(f.released, (std::vector<std::string>{"caf", "", "é au lait 🙂"}));
  EXPECT_EQ(feed({"🙂"}, {"ok 🙂 fine"}).total, "ok ");
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
  const Fed f = feed({"", "x"}, {"abc"});
  EXPECT_FALSE(f.stopped);
  EXPECT_EQ(f.total, "abc");
}

TEST(StopMatcher, NothingIsReleasedAfterAStop) {
  StopMatcher m({"."});
  EXPECT_EQ(m.push("one. two").text, "one");
  const StopMatcher::Result after = m.push("three");
  EXPECT_EQ(after.text, "");
  EXPECT_TRUE(after.stopped);
  EXPECT_EQ(m.release(), "");
}

// The Anthropic API answers with the stop_sequence that ended the text: the one found first
// in the text, not the first in the list, even when it arrived split across pieces.
TEST(StopMatcher, SaysWhichStopStringMatched) {
  StopMatcher m({"END", "##"});
  const StopMatcher::Result first = m.push("a #");
  EXPECT_EQ(first.text, "a ");
  EXPECT_EQ(first.stop, "");
  const StopMatcher::Result r = m.push("# b END");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(r.stop, "##");
}

}  // namespace
}  // namespace nanoserve::engine
