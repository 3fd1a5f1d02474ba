#include "lab/expression.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace nanoserve::lab {

ExpressionError::ExpressionError(const std::string& what, size_t at)
    : std::runtime_error(what + " at offset " + std::to_string(at)), offset(at) {}

// Recursive descent, one function per precedence level:
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'
class Expression::Parser {
 public:
  Parser(std::string_view text, std::vector<Node>& nodes) : text_(text), nodes_(nodes) {}

  size_t whole() {
    const size_t root = sum();
    skip_spaces();
    if (at_ < text_.size()) throw ExpressionError(std::string("unexpected '") + text_[at_] + "'", at_);
    return root;
  }

 private:
  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  size_t add(Node node) {
    nodes_.push_back(std::move(node));
    return nodes_.size() - 1;
  }

  size_t sum() {
    size_t left = product();
    for (;;) {
      skip_spaces();
      const size_t op_at = at_;
      if (take('+')) left = add({Kind::Add, op_at, 0, {}, {left, product()}});
      else if (take('-')) left = add({Kind::Subtract, op_at, 0, {}, {left, product()}});
      else return left;
    }
  }

  size_t product() {
    size_t left = unary();
    for (;;) {
      skip_spaces();
      const size_t op_at = at_;
      if (take('*')) left = add({Kind::Multiply, op_at, 0, {}, {left, unary()}});
      else if (take('/')) left = add({Kind::Divide, op_at, 0, {}, {left, unary()}});
      else return left;
    }
  }

  size_t unary() {
    skip_spaces();
    const size_t op_at = at_;
    if (take('-')) return add({Kind::Negate, op_at, 0, {}, {unary()}});
    return primary();
  }

  size_t primary() {
    skip_spaces();
    const size_t start = at_;
    if (at_ >= text_.size()) throw ExpressionError("the formula ends where a value was expected", at_);
    const char c = text_[at_];
    if (take('(')) {
      const size_t inner = sum();
      if (!take(')')) throw ExpressionError("unclosed '('", start);
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name_or_call();
    throw ExpressionError(std::string("unexpected '") + c + "'", at_);
  }

  size_t number() {
    const size_t start = at_;
    double value = 0;
    const auto [end, error] = std::from_chars(text_.data() + at_, text_.data() + text_.size(), value);
    if (error != std::errc()) throw ExpressionError("malformed number", start);
    at_ = static_cast<size_t>(end - text_.data());
    return add({Kind::Number, start, value, {}, {}});
  }

  size_t name_or_call() {
    const size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
    std::string name(text_.substr(start, at_ - start));
    if (!take('(')) return add({Kind::Name, start, 0, std::move(name), {}});
    Kind kind;
    if (name == "min") kind = Kind::Min;
    else if (name == "max") kind = Kind::Max;
    else throw ExpressionError("unknown function '" + name + "' (min and max are known)", start);
    std::vector<size_t> arguments = {sum()};
    while (take(',')) arguments.push_back(sum());
    if (!take(')')) throw ExpressionError("expected ',' or ')' in the arguments of " + name, at_);
    if (arguments.size() < 2) throw ExpressionError(name + " needs at least two arguments", start);
    return add({kind, start, 0, {}, std::move(arguments)});
  }

  std::string_view text_;
  std::vector<Node>& nodes_;
  size_t at_ = 0;
};

Expression Expression::parse(std::string_view text) {
  Expression e;
  e.text_ = std::string(text);
  Parser parser(e.text_, e.nodes_);
  e.root_ = parser.whole();
  return e;
}

double Expression::evaluate(const std::map<std::string, double>& values) const {
  return evaluate(root_, values);
}

double Expression::evaluate(size_t index, const std::map<std::string, double>& values) const {
  const Node& n = nodes_[index];
  auto operand = [&](size_t i) { return evaluate(n.operands[i], values); };
  switch (n.kind) {
    case Kind::Number:
      return n.number;
    case Kind::Name: {
      const auto found = values.find(n.name);
      if (found == values.end()) throw ExpressionError("no value for '" + n.name + "'", n.offset);
      return found->second;
    }
    case Kind::Negate:
      return -operand(0);
    case Kind::Add:
      return operand(0) + operand(1);
    case Kind::Subtract:
      return operand(0) - operand(1);
    case Kind::Multiply:
      return operand(0) * operand(1);
    case Kind::Divide: {
      const double divisor = operand(1);
      if (divisor == 0) throw ExpressionError("division by zero", n.offset);
      return operand(0) / divisor;
    }
    case Kind::Min:
    case Kind::Max: {
      double result = operand(0);
      for (size_t i = 1; i < n.operands.size(); ++i)
        result = n.kind == Kind::Min ? std::min(result, operand(i)) : std::max(result, operand(i));
      return result;
    }
  }
  return 0;  // unreachable: every kind returns above
}

std::vector<Expression::Name> Expression::names() const {
  std::vector<const Node*> found;
  for (const Node& n : nodes_)
    if (n.kind == Kind::Name) found.push_back(&n);
  std::sort(found.begin(), found.end(), [](const Node* a, const Node* b) { return a->offset < b->offset; });
  std::vector<Name> names;
  for (const Node* n : found)
    if (std::none_of(names.begin(), names.end(), [&](const Name& seen) { return seen.name == n->name; }))
      names.push_back({n->name, n->offset});
  return names;
}

}  // namespace nanoserve::lab
