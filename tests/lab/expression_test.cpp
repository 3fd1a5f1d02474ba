// The experiment files' formula language: values, precedence, min/max, and errors that say where.
#include "lab/expression.h"

#include <gtest/gtest.h>

namespace nanoserve::lab {
namespace {

double eval(const std::string& text, const std::map<std::string, double>& values = {}) {
  return Expression::parse(text).evaluate(values);
}

// The offset an error names, or -1 when there was none.
long error_offset(const std::string& text, const std::map<std::string, double>& values = {}) {
  try {
    eval(text, values);
  } catch (const ExpressionError& e) {
    return static_cast<long>(e.offset);
  }
  return -1;
}

TEST(Expression, NumbersAndNames) {
  EXPECT_DOUBLE_EQ(eval("42"), 42);
  EXPECT_DOUBLE_EQ(eval(".5"), 0.5);
  EXPECT_DOUBLE_EQ(eval("2e9"), 2e9);
  EXPECT_DOUBLE_EQ(eval("1.5E-3"), 1.5e-3);
  EXPECT_DOUBLE_EQ(eval("bandwidth_gb_s", {{"bandwidth_gb_s", 12.5}}), 12.5);
  EXPECT_DOUBLE_EQ(eval("  x2  ", {{"x2", 3}}), 3);
}

TEST(Expression, PrecedenceAndAssociativity) {
  EXPECT_DOUBLE_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(eval("8 - 3 - 2"), 3);  // left to right
  EXPECT_DOUBLE_EQ(eval("16 / 4 / 2"), 2);
  EXPECT_DOUBLE_EQ(eval("-2 * -3"), 6);
  EXPECT_DOUBLE_EQ(eval("--4"), 4);
  EXPECT_DOUBLE_EQ(eval("2 - -1"), 3);
  EXPECT_DOUBLE_EQ(eval("1 / (1 - 0.5)"), 2);
}

TEST(Expression, MinAndMax) {
  EXPECT_DOUBLE_EQ(eval("min(3, 1, 2)"), 1);
  EXPECT_DOUBLE_EQ(eval("max(3, 1 + 4, 2)"), 5);
  EXPECT_DOUBLE_EQ(eval("max(min(a, 1), 0.25) * 4", {{"a", 0.1}}), 1);
}

TEST(Expression, TheFormulaOfAnExperiment) {
  const Expression e = Expression::parse("(model_bytes + tokens * layers * 2 * kv) / 1e6");
  EXPECT_DOUBLE_EQ(e.evaluate({{"model_bytes", 1e6}, {"tokens", 1000}, {"layers", 4}, {"kv", 125}}), 2);
  const auto names = e.names();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].name, "model_bytes");
  EXPECT_EQ(names[0].offset, 1u);
  EXPECT_EQ(names[1].name, "tokens");
  EXPECT_EQ(names[3].name, "kv");
}

TEST(Expression, NamesAreListedOnceAtTheirFirstUse) {
  const auto names = Expression::parse("x * y + x").names();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].name, "x");
  EXPECT_EQ(names[0].offset, 0u);
}

TEST(Expression, ErrorsNameTheOffset) {
  EXPECT_EQ(error_offset("1 +"), 3);          // ends where a value was expected
  EXPECT_EQ(error_offset("1 + * 2"), 4);      // unexpected '*'
  EXPECT_EQ(error_offset("(1 + 2"), 0);       // unclosed '('
  EXPECT_EQ(error_offset("1 2"), 2);          // unexpected '2'
  EXPECT_EQ(error_offset("pow(2, 3)"), 0);    // unknown function
  EXPECT_EQ(error_offset("min(2)"), 0);       // one argument
  EXPECT_EQ(error_offset("min(2, 3"), 8);     // no ')'
  EXPECT_EQ(error_offset("2 $ 3"), 2);        // not a character of the language
  EXPECT_EQ(error_offset("1 + y", {}), 4);    // no value for y
  EXPECT_EQ(error_offset("1 / (a - a)", {{"a", 2}}), 2);  // division by zero
}

TEST(Expression, ErrorMessagesSayWhat) {
  try {
    eval("a * b", {{"a", 1}});
    FAIL() << "no error";
  } catch (const ExpressionError& e) {
    EXPECT_STREQ(e.what(), "no value for 'b' at offset 4");
  }
  try {
    Expression::parse("sqrt(4)");
    FAIL() << "no error";
  } catch (const ExpressionError& e) {
    EXPECT_STREQ(e.what(), "unknown function 'sqrt' (min and max are known) at offset 0");
  }
}

}  // namespace
}  // namespace nanoserve::lab
