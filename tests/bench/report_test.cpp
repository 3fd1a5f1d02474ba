// The pieces of the summary: markdown tables and figures, the README splice between its
// markers, and the sections built from rows.
#include <gtest/gtest.h>

#include "bench/markdown.h"
#include "bench/readme_splice.h"

namespace nanoserve::bench {
namespace {

TEST(Markdown, TablesAlignFigures) {
  MarkdownTable t({"name", "value"});
  t.add({"a", "1.0"});
  EXPECT_EQ(t.text(), "| name | value |\n|---|---:|\n| a | 1.0 |\n");
  MarkdownTable plain({"k", "v"}, false);
  plain.add({"x", "y"});
  EXPECT_EQ(plain.text(), "| k | v |\n|---|---|\n| x | y |\n");
  EXPECT_THROW(t.add({"too few"}), std::logic_error);
}

TEST(Markdown, SpreadsShowMedianAndRange) {
  EXPECT_EQ(spread_text(Spread{2, 1, 3, 3}, 1), "2.0 (1.0–3.0)");
  EXPECT_EQ(spread_text(Spread{2, 2, 2, 3}, 1), "2.0");
  EXPECT_EQ(spread_text(Spread{2500, 2000, 3000, 1}, 2, 1e-3), "2.50");
  EXPECT_EQ(spread_text(std::nullopt, 1), "–");
  EXPECT_EQ(mb_text(1.5e6), "1.5");
  EXPECT_EQ(number_text(std::nullopt, 2), "–");
}

TEST(ReadmeSplice, ReplacesOnlyWhatIsBetweenTheMarkers) {
  const std::string begin = kResultsBegin, end = kResultsEnd;
  const std::string readme = "# T\n\nintro\n" + begin + "\nold\nlines\n" + end + "\nafter\n";
  EXPECT_EQ(splice_between_markers(readme, "new"), "# T\n\nintro\n" + begin + "\nnew\n" + end + "\nafter\n");
  // Splicing twice gives the same file.
  EXPECT_EQ(splice_between_markers(splice_between_markers(readme, "new\n"), "new\n"),
            splice_between_markers(readme, "new\n"));
}

TEST(ReadmeSplice, MissingOrRepeatedMarkersAreErrors) {
  const std::string begin = kResultsBegin, end = kResultsEnd;
  EXPECT_THROW(splice_between_markers("no markers", "x"), std::runtime_error);
  EXPECT_THROW(splice_between_markers(begin + "\n", "x"), std::runtime_error);
  EXPECT_THROW(splice_between_markers(end + "\n" + begin + "\n", "x"), std::runtime_error);
  EXPECT_THROW(splice_between_markers(begin + end + begin + end, "x"), std::runtime_error);
}

}  // namespace
}  // namespace nanoserve::bench
