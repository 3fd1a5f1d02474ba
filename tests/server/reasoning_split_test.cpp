#include "server/reasoning_split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nanoserve::server {
namespace {

// Feeds `pieces` one by one; returns the reasoning and content joined.
ReasoningSplit::Pieces run(std::vector<std::string> pieces, bool opened = false) {
  ReasoningSplit split(opened);
  ReasoningSplit::Pieces all;
  for (const std::string& p : pieces) {
    auto out = split.push(p);
    all.reasoning += out.reasoning;
    all.content += out.content;
  }
  auto out = split.finish();
  all.reasoning += out.reasoning;
  all.content += out.content;
  return all;
}

TEST(ReasoningSplit, ThinkingIsToldFromTheAnswerWhereverThePiecesAreCut) {
  const std::string text = "<think>\nLet me see: 2+2.\n</think>\n\nIt is 4.";
  for (size_t cut1 = 0; cut1 <= text.size(); ++cut1)
    for (size_t cut2 = cut1; cut2 <= text.size(); cut2 += 3) {
      const auto out = run({text.substr(0, cut1), text.substr(cut1, cut2 - cut1), text.substr(cut2)});
      EXPECT_EQ(out.reasoning, "\nLet me see: 2+2.\n") << cut1 << " " << cut2;
      EXPECT_EQ(out.content, "It is 4.") << cut1 << " " << cut2;
    }
}

TEST(ReasoningSplit, WithoutATagAtTheStartAllIsContent) {
  EXPECT_EQ(run({"Hello <think>not", " this</think>"}).content, "Hello <think>not this</think>");
  EXPECT_EQ(run({"<thi", "s is text"}).content, "<this is text");
  EXPECT_EQ(run({"<thi"}).content, "<thi");
  EXPECT_EQ(run({"  \n"}).content, "  \n");
}

TEST(ReasoningSplit, OpenedByTheTemplateOrNeverClosed) {
  const auto opened = run({"plan...", "</thi", "nk>answer"}, true);
  EXPECT_EQ(opened.reasoning, "plan...");
  EXPECT_EQ(opened.content, "answer");
  const auto unclosed = run({"<think>still thinking </th"});  // max_tokens hit mid-thought
  EXPECT_EQ(unclosed.reasoning, "still thinking </th");
  EXPECT_EQ(unclosed.content, "");
}

}  // namespace
}  // namespace nanoserve::server
