#include "template/jinja_operators.h"

#include <cmath>

#include "template/jinja_builtins.h"
#include "template/jinja_pystr.h"

namespace nanoserve::templates::jinja {
namespace {

using node::BinaryOp;

std::string_view symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSubtract: return "-";
    case BinaryOp::kMultiply: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kFloorDivide: return "//";
    case BinaryOp::kModulo: return "%";
    case BinaryOp::kPower: return "**";
    case BinaryOp::kConcat: return "~";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
  }
  return "?";
}

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
  throw TemplateError("unsupported operand type(s) for " + std::string(symbol(op)) + ": '" +
                      std::string(a.type_name()) + "' and '" + std::string(b.type_name()) + "'");
}

[[noreturn]] void integer_overflow() { throw TemplateError("integer overflow"); }

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) integer_overflow();
  return r;
}
int64_t checked_subtract(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) integer_overflow();
  return r;
}
int64_t checked_multiply(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) integer_overflow();
  return r;
}

int64_t integer_power(int64_t base, int64_t exponent) {
  int64_t result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result = checked_multiply(result, base);
    if (exponent > 1) base = checked_multiply(base, base);
  }
  return result;
}

Value integer_arithmetic(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::kAdd: return Value::integer(checked_add(a, b));
    case BinaryOp::kSubtract: return Value::integer(checked_subtract(a, b));
    case BinaryOp::kMultiply: return Value::integer(checked_multiply(a, b));
    case BinaryOp::kDivide:
      if (b == 0) throw TemplateError("division by zero");
      return Value::floating(static_cast<double>(a) / static_cast<double>(b));
    case BinaryOp::kFloorDivide:
    case BinaryOp::kModulo: {
      if (b == 0) throw TemplateError("integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) integer_overflow();
      // Python rounds the quotient down, so the remainder takes the divisor's sign.
      int64_t quotient = a / b, remainder = a % b;
      if (remainder != 0 && ((remainder < 0) != (b < 0))) --quotient, remainder += b;
      return Value::integer(op == BinaryOp::kFloorDivide ? quotient : remainder);
    }
    case BinaryOp::kPower:
      if (b < 0) {
        if (a == 0) throw TemplateError("0 cannot be raised to a negative power");
        return Value::floating(std::pow(static_cast<double>(a), static_cast<double>(b)));
      }
      return Value::integer(integer_power(a, b));
    default: return Value();
  }
}

Value float_arithmetic(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return Value::floating(a + b);
    case BinaryOp::kSubtract: return Value::floating(a - b);
    case BinaryOp::kMultiply: return Value::floating(a * b);
    case BinaryOp::kDivide:
      if (b == 0) throw TemplateError("float division by zero");
      return Value::floating(a / b);
    case BinaryOp::kFloorDivide:
    case BinaryOp::kModulo: {
      if (b == 0) throw TemplateError("float modulo or floor division by zero");
      double remainder = std::fmod(a, b);
      if (remainder != 0 && ((remainder < 0) != (b < 0))) remainder += b;
      return Value::floating(op == BinaryOp::kModulo ? remainder : std::floor((a - remainder) / b + 0.5));
    }
    case BinaryOp::kPower:
      if (a == 0 && b < 0) throw TemplateError("0.0 cannot be raised to a negative power");
      return Value::floating(std::pow(a, b));
    default: return Value();
  }
}

// "ab" * 3 and [x] * 3.
Value repeat(const Value& sequence, int64_t count) {
  if (count <= 0) return sequence.is_string() ? Value::string("") : Value::list({}, sequence.as_list().is_tuple);
  const auto n = static_cast<uint64_t>(count);
  if (sequence.is_string()) {
    const std::string& s = sequence.as_string();
    if (!s.empty() && n > kMaxStringBytes / s.size())
      throw TemplateError("a string grew past the limit of " + std::to_string(kMaxStringBytes >> 20) + " MiB");
    std::string out;
    out.reserve(s.size() * n);
    for (uint64_t i = 0; i < n; ++i) out += s;
    return Value::string(std::move(out));
  }
  const List& list = sequence.as_list();
  if (!list.items.empty() && n > kMaxContainerItems / list.items.size())
    throw TemplateError("a list grew past the limit of " + std::to_string(kMaxContainerItems) + " items");
  std::vector<Value> out;
  for (uint64_t i = 0; i < n; ++i) out.insert(out.end(), list.items.begin(), list.items.end());
  return Value::list(std::move(out), list.is_tuple);
}

bool is_integral(const Value& v) { return v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kBool; }

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!item.is_string())
        throw TemplateError("'in <string>' requires string as left operand, not " + std::string(item.type_name()));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& element : container.as_list().items)
        if (equals(element, item)) return true;
      return false;
    case Value::Kind::kDict: return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
    default: throw TemplateError("argument of type '" + std::string(container.type_name()) + "' is not iterable");
  }
}

}  // namespace

Value apply_binary(BinaryOp op, const Value& a, const Value& b) {
  if (op == BinaryOp::kConcat) {
    std::string joined = to_text(a);
    append_bounded(joined, to_text(b));
    return Value::string(std::move(joined));
  }
  // Undefined refuses arithmetic, with the message that says what was undefined.
  if (a.is_undefined()) throw TemplateError(a.as_undefined().description);
  if (b.is_undefined()) throw TemplateError(b.as_undefined().description);
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat)
      return float_arithmetic(op, a.as_double(), b.as_double());
    return integer_arithmetic(op, a.as_integral(), b.as_integral());
  }
  const bool a_list = a.kind() == Value::Kind::kList, b_list = b.kind() == Value::Kind::kList;
  if (op == BinaryOp::kAdd) {
    if (a.is_string() && b.is_string()) {
      std::string joined = a.as_string();
      append_bounded(joined, b.as_string());
      return Value::string(std::move(joined));
    }
    if (a_list && b_list && a.as_list().is_tuple == b.as_list().is_tuple) {
      if (a.as_list().items.size() + b.as_list().items.size() > kMaxContainerItems)
        throw TemplateError("a list grew past the limit of " + std::to_string(kMaxContainerItems) + " items");
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      return Value::list(std::move(items), a.as_list().is_tuple);
    }
  }
  if (op == BinaryOp::kAdd && (a.is_string() || a_list))
    throw TemplateError("can only concatenate " + std::string(a.type_name()) + " (not \"" + std::string(b.type_name()) +
                        "\") to " + std::string(a.type_name()));
  if (op == BinaryOp::kMultiply) {
    if ((a.is_string() || a_list) && is_integral(b)) return repeat(a, b.as_integral());
    if ((b.is_string() || b_list) && is_integral(a)) return repeat(b, a.as_integral());
  }
  if (op == BinaryOp::kModulo && a.is_string()) throw TemplateError("printf-style formatting (str % x) is not supported");
  unsupported(op, a, b);
}

Value apply_unary(node::UnaryOp op, const Value& v) {
  if (v.is_undefined()) throw TemplateError(v.as_undefined().description);
  if (!v.is_number())
    throw TemplateError(std::string("bad operand type for unary ") + (op == node::UnaryOp::kNegate ? "-" : "+") +
                        ": '" + std::string(v.type_name()) + "'");
  if (v.kind() == Value::Kind::kFloat) return Value::floating(op == node::UnaryOp::kNegate ? -v.as_double() : v.as_double());
  const int64_t i = v.as_integral();
  if (op != node::UnaryOp::kNegate) return Value::integer(i);
  if (i == INT64_MIN) integer_overflow();
  return Value::integer(-i);
}

bool apply_compare(node::CompareOp op, const Value& a, const Value& b) {
  using node::CompareOp;
  switch (op) {
    case CompareOp::kEqual: return equals(a, b);
    case CompareOp::kNotEqual: return !equals(a, b);
    case CompareOp::kLess: return less_than(a, b);
    case CompareOp::kLessEqual: return !less_than(b, a);
    case CompareOp::kGreater: return less_than(b, a);
    case CompareOp::kGreaterEqual: return !less_than(a, b);
    case CompareOp::kIn: return contains(b, a);
    case CompareOp::kNotIn: return !contains(b, a);
  }
  return false;
}

}  // namespace nanoserve::templates::jinja
