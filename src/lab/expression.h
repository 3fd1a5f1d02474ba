// The first-principles formulas of the experiment files: numbers (1, 0.5, 2e9), names of the
// lab's quantities, + - * /, unary minus, parentheses, and min(a, b, ...) / max(a, b, ...).
// Parsed once when a file is read (a mistake is found before anything is measured), evaluated
// with the values the lab obtained. Every error names the offset in the formula's text.
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::lab {

struct ExpressionError : std::runtime_error {
  ExpressionError(const std::string& what, size_t at);
  size_t offset;  // in the formula's text, 0-based
};

class Expression {
 public:
  // Throws ExpressionError for text that is not a formula.
  static Expression parse(std::string_view text);

  // Throws ExpressionError for a name without a value and for a division by zero.
  double evaluate(const std::map<std::string, double>& values) const;

  // Every name the formula reads, each once, in order of first use, with its first offset.
  struct Name {
    std::string name;
    size_t offset;
  };
  std::vector<Name> names() const;
  const std::string& text() const { return text_; }

 private:
  enum class Kind { Number, Name, Negate, Add, Subtract, Multiply, Divide, Min, Max };
  struct Node {
    Kind kind;
    size_t offset;
    double number = 0;
    std::string name;
    std::vector<size_t> operands;  // indices into nodes_
  };
  class Parser;

  double evaluate(size_t node, const std::map<std::string, double>& values) const;

  std::string text_;
  std::vector<Node> nodes_;
  size_t root_ = 0;
};

}  // namespace nanoserve::lab
