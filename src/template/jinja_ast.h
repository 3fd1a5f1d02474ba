// The syntax tree of a parsed template: expressions (Expr) and statements (Stmt). Every
// node keeps the byte offset of its source so a render error can say line:column.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "template/jinja_value.h"

namespace nanoserve::templates::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// f(a, b, key=c)
struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

namespace node {

struct Literal {
  Value value;
};
struct Variable {
  std::string name;
};
struct ListLiteral {  // [a, b] or the tuple (a, b)
  std::vector<ExprPtr> items;
  bool is_tuple = false;
};
struct DictLiteral {
  std::vector<std::pair<ExprPtr, ExprPtr>> entries;
};
struct Attribute {  // object.name
  ExprPtr object;
  std::string name;
};
struct Subscript {  // object[index]
  ExprPtr object;
  ExprPtr index;
};
struct Slice {  // object[start:stop:step], each part optional (null)
  ExprPtr object;
  ExprPtr start, stop, step;
};
struct Call {
  ExprPtr callee;
  Arguments arguments;
};
struct Filter {  // operand | name(arguments)
  ExprPtr operand;
  std::string name;
  Arguments arguments;
};
struct Test {  // operand is [not] name(arguments)
  ExprPtr operand;
  std::string name;
  Arguments arguments;
  bool negated = false;
};
enum class UnaryOp { kNot, kNegate, kPlus };
struct Unary {
  UnaryOp op;
  ExprPtr operand;
};
enum class BinaryOp { kAdd, kSubtract, kMultiply, kDivide, kFloorDivide, kModulo, kPower, kConcat, kAnd, kOr };
struct Binary {
  BinaryOp op;
  ExprPtr left, right;
};
enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kIn, kNotIn };
struct Compare {  // a < b <= c: every pair must hold, as in Python
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
};
struct Conditional {  // then if condition else otherwise (otherwise may be null: undefined)
  ExprPtr condition, then, otherwise;
};

}  // namespace node

struct Expr {
  size_t offset;
  int depth;  // 1 + the deepest child: bounded so evaluating never recurses too far
  std::variant<node::Literal, node::Variable, node::ListLiteral, node::DictLiteral, node::Attribute, node::Subscript,
               node::Slice, node::Call, node::Filter, node::Test, node::Unary, node::Binary, node::Compare,
               node::Conditional>
      node;
};

struct Stmt;
using Body = std::vector<Stmt>;

namespace node {

struct Text {
  std::string text;
};
struct Output {  // {{ value }}
  ExprPtr value;
};
struct If {  // if / elif ... / else
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body otherwise;
};
// The names a for loop or set binds: `x`, or `a, b` to unpack a sequence.
struct Target {
  std::vector<std::string> names;
  bool unpack = false;
};
struct For {
  Target target;
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`; may be null
  Body body;
  Body otherwise;  // rendered when nothing was iterated
};
struct Set {
  Target target;
  ExprPtr value;
};
struct SetAttribute {  // {% set ns.name = value %}
  std::string object;
  std::string attribute;
  ExprPtr value;
};
struct SetBlock {  // {% set name %}...{% endset %}
  std::string name;
  Body body;
};
struct Break {};
struct Continue {};
// {% macro name(a, b=default) %}...{% endmacro %}: called as name(...), it renders its body with
// its parameters bound and gives the text.
struct Macro {
  std::string name;
  std::vector<std::string> parameters;
  std::vector<ExprPtr> defaults;  // one per parameter; null: none (undefined when not passed)
  Body body;
};

}  // namespace node

struct Stmt {
  size_t offset;
  std::variant<node::Text, node::Output, node::If, node::For, node::Set, node::SetAttribute, node::SetBlock,
               node::Break, node::Continue, std::shared_ptr<const node::Macro>>
      node;
};

}  // namespace nanoserve::templates::jinja
