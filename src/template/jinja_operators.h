// Python's operators on template values: arithmetic on int (64-bit, overflow is an error
// where Python would grow) and float, + and * on str and list, ~, comparisons and `in`.
#pragma once

#include "template/jinja_ast.h"

namespace nanoserve::templates::jinja {

// Every BinaryOp except kAnd and kOr, which short-circuit in the renderer.
Value apply_binary(node::BinaryOp op, const Value& left, const Value& right);
// kNegate and kPlus (kNot is plain truthiness).
Value apply_unary(node::UnaryOp op, const Value& operand);
bool apply_compare(node::CompareOp op, const Value& left, const Value& right);

}  // namespace nanoserve::templates::jinja
