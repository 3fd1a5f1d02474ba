// What templates call: filters (`x | tojson`), tests (`x is defined`), methods of str and
// dict (`s.startswith(...)`, `d.get(...)`), Jinja's attribute and item lookup, and the
// global functions Hugging Face's renderer provides (raise_exception, strftime_now,
// namespace, range, dict).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "template/jinja_value.h"

namespace nanoserve::templates::jinja {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Binds arguments to a builtin's parameters as Python does (by position, then by name);
// throws TemplateError for too many arguments, an unknown keyword or one given twice.
// With `rest`, positional arguments beyond `names` are kept (Python's *args).
class Parameters {
 public:
  Parameters(std::string_view callee, const CallArgs& args, std::vector<std::string_view> names, bool rest = false);
  const Value* operator[](size_t i) const { return bound_[i]; }  // null when not given
  const std::vector<Value>& rest() const { return rest_; }
  const Value& required(size_t i) const;
  std::optional<std::string> optional_string(size_t i) const;  // absent or None → nullopt
  int64_t integer_or(size_t i, int64_t fallback) const;
  bool boolean_or(size_t i, bool fallback) const;

 private:
  std::string_view callee_;
  std::vector<std::string_view> names_;
  std::vector<const Value*> bound_;
  std::vector<Value> rest_;
};

// Python iteration: list items, dict keys, string characters; undefined is empty.
std::vector<Value> iterate(const Value& value);

// Jinja's getattr (obj.name) and getitem (obj[key]): a missing attribute, key or index is
// undefined; looking into an undefined value is an error.
Value get_attribute(const Value& object, std::string_view name);
Value get_item(const Value& object, const Value& key);

bool is_filter(std::string_view name);
Value apply_filter(std::string_view name, const Value& operand, const CallArgs& args);
bool is_test(std::string_view name);
bool apply_test(std::string_view name, const Value& operand, const CallArgs& args);

Value call_method(const BoundMethod& method, const CallArgs& args);

// The globals. strftime_now formats `fixed_now` when set, the local time otherwise.
// The static spelling of a global function's name (for Value::function), or nullopt.
std::optional<std::string_view> global_function_name(std::string_view name);
Value call_global_function(std::string_view name, const CallArgs& args, const std::optional<std::tm>& fixed_now);

}  // namespace nanoserve::templates::jinja
