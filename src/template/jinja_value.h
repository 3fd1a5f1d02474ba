// The values a template computes with, modelled on the Python objects Jinja hands around:
// undefined, None, bool, int, float, str, list/tuple, dict (insertion-ordered, str keys),
// namespace (the one mutable object), a method bound to its object (`text.strip`) and a
// global function (`raise_exception`). Lists and dicts are immutable and shared, so copying
// a Value is cheap except for a string.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "template/jinja_limits.h"

namespace nanoserve::templates::jinja {

class Value;

// Jinja's default Undefined: falsy, prints as "", iterates as empty; using it any other
// way is an error that says what was undefined.
struct Undefined {
  std::string description;  // e.g. "'foo' is undefined"
};
struct None {};

struct List {
  std::vector<Value> items;
  bool is_tuple = false;     // only repr() tells them apart: (1, 2) against [1, 2]
  int depth = 1;             // 1 + the deepest list or dict inside
  bool holds_namespace = false;
};

class Dict {
 public:
  using Entries = std::vector<std::pair<std::string, Value>>;
  // A later duplicate key replaces the earlier value in its place, as in a Python dict literal.
  explicit Dict(Entries entries);
  const Value* find(std::string_view key) const;
  const Entries& entries() const { return entries_; }
  int depth() const { return depth_; }
  bool holds_namespace() const { return holds_namespace_; }

 private:
  Entries entries_;
  std::unordered_map<std::string, size_t> index_;  // only for dicts too big to search linearly
  int depth_ = 1;
  bool holds_namespace_ = false;
};

// `namespace(...)`: attributes that `{% set ns.name = value %}` changes from inside loops.
class Namespace {
 public:
  const Value* find(std::string_view name) const;
  void set(const std::string& name, Value value);
  const Dict::Entries& attributes() const { return attributes_; }

 private:
  Dict::Entries attributes_;
};

// A for loop's `loop` variable: one per loop, moved along as it iterates (as Jinja's LoopContext).
struct LoopState {
  std::shared_ptr<const std::vector<Value>> items;
  int64_t index0 = 0;
};

struct BoundMethod;
struct Function {
  std::string_view name;  // a global of the template environment (static storage)
};

class Value {
 public:
  enum class Kind {
    kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kLoop, kMethod, kFunction
  };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string description) { return Value(Undefined{std::move(description)}); }
  static Value none() { return Value(None{}); }
  static Value boolean(bool b) { return Value(Data(std::in_place_type<bool>, b)); }
  static Value integer(int64_t i) { return Value(Data(std::in_place_type<int64_t>, i)); }
  static Value floating(double d) { return Value(Data(std::in_place_type<double>, d)); }
  static Value string(std::string s) { return Value(Data(std::in_place_type<std::string>, std::move(s))); }
  // Throw TemplateError beyond kMaxContainerItems items or kMaxValueNesting levels.
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value dict(Dict::Entries entries);
  static Value new_namespace() { return Value(Data(std::make_shared<Namespace>())); }
  static Value loop(std::shared_ptr<const LoopState> state) { return Value(Data(std::move(state))); }
  static Value method(Value receiver, std::string_view name);
  static Value function(std::string_view name) { return Value(Function{name}); }

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_number() const { return kind() == Kind::kBool || kind() == Kind::kInt || kind() == Kind::kFloat; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }  // kInt only
  int64_t as_integral() const;                                // kInt or kBool (Python's bool is an int)
  double as_double() const;                                   // any number
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const List& as_list() const { return *std::get<std::shared_ptr<const List>>(data_); }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(data_); }
  const LoopState& as_loop() const { return *std::get<std::shared_ptr<const LoopState>>(data_); }
  const BoundMethod& as_method() const { return *std::get<std::shared_ptr<const BoundMethod>>(data_); }
  const Function& as_function() const { return std::get<Function>(data_); }
  const Undefined& as_undefined() const { return std::get<Undefined>(data_); }

  bool truthy() const;                 // Python's bool()
  std::string_view type_name() const;  // Python's type(x).__name__, for error messages
  int depth() const;                   // list/dict nesting, 0 for scalars
  // Is or contains a namespace or loop: a namespace must not hold one (it could then hold itself).
  bool holds_namespace() const;

 private:
  using Data = std::variant<Undefined, None, bool, int64_t, double, std::string, std::shared_ptr<const List>,
                            std::shared_ptr<const Dict>, std::shared_ptr<Namespace>, std::shared_ptr<const LoopState>,
                            std::shared_ptr<const BoundMethod>, Function>;
  explicit Value(Data data) : data_(std::move(data)) {}
  Data data_;
};

struct BoundMethod {
  Value receiver;
  std::string_view name;  // static storage
};

// Python's ==.
bool equals(const Value& a, const Value& b);
// Python's <, for numbers, strings and lists; throws TemplateError for anything else.
bool less_than(const Value& a, const Value& b);

// Python's str(): the text `{{ value }}` prints (undefined prints nothing).
std::string to_text(const Value& value);
// Python's repr(): how a value looks inside a printed list or dict.
std::string to_repr(const Value& value);

struct JsonFormat {
  std::optional<std::string> indent;  // json.dumps(indent=...): newline and this per level
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// json.dumps(value, ...) as Hugging Face's tojson calls it; throws TemplateError for values
// JSON cannot hold (undefined, namespaces, functions).
std::string to_json(const Value& value, const JsonFormat& format);

// Input data (messages, tools, extra variables) as template values, keys in input order.
Value from_json(const nlohmann::ordered_json& json);

}  // namespace nanoserve::templates::jinja
