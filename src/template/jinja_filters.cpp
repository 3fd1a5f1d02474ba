// Filters and tests, with the semantics of Jinja 3.1's builtins (and Hugging Face's tojson).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "template/jinja_builtins.h"
#include "template/jinja_pystr.h"

namespace nanoserve::templates::jinja {
namespace {

using Filter = Value (*)(const Value& operand, const CallArgs& args);
using Test = bool (*)(const Value& operand, const CallArgs& args);

void no_arguments(std::string_view callee, const CallArgs& args) { Parameters(callee, args, {}); }

const Value& single_argument(std::string_view test, const CallArgs& args) {
  return Parameters(test, args, {"other"}).required(0);
}

// ---- filters ----

Value filter_tojson(const Value& v, const CallArgs& args) {
  const Parameters p("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonFormat format;
  format.ensure_ascii = p.boolean_or(0, false);
  format.sort_keys = p.boolean_or(3, false);
  if (const Value* indent = p[1]; indent && !indent->is_none()) {
    if (indent->is_string()) {
      format.indent = indent->as_string();
    } else {
      const int64_t n = p.integer_or(1, 0);
      if (n > 256) throw TemplateError("tojson indent is too large");
      format.indent = std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' ');
    }
    format.item_separator = ",";  // json.dumps's default when indenting
  }
  if (const Value* separators = p[2]; separators && !separators->is_none()) {
    const auto parts = iterate(*separators);
    if (parts.size() != 2 || !parts[0].is_string() || !parts[1].is_string())
      throw TemplateError("tojson separators must be two strings");
    format.item_separator = parts[0].as_string();
    format.key_separator = parts[1].as_string();
  }
  return Value::string(to_json(v, format));
}

Value filter_trim(const Value& v, const CallArgs& args) {
  const Parameters p("trim", args, {"chars"});
  return Value::string(python_strip(to_text(v), p.optional_string(0), StripSide::kBoth));
}

Value filter_length(const Value& v, const CallArgs& args) {
  no_arguments("length", args);
  switch (v.kind()) {
    case Value::Kind::kUndefined: return Value::integer(0);
    case Value::Kind::kString: return Value::integer(static_cast<int64_t>(code_point_count(v.as_string())));
    case Value::Kind::kList: return Value::integer(static_cast<int64_t>(v.as_list().items.size()));
    case Value::Kind::kDict: return Value::integer(static_cast<int64_t>(v.as_dict().entries().size()));
    default: throw TemplateError("object of type '" + std::string(v.type_name()) + "' has no len()");
  }
}

Value filter_first(const Value& v, const CallArgs& args) {
  no_arguments("first", args);
  const auto items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value filter_last(const Value& v, const CallArgs& args) {
  no_arguments("last", args);
  const auto items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value filter_list(const Value& v, const CallArgs& args) {
  no_arguments("list", args);
  return Value::list(iterate(v));
}

Value filter_items(const Value& v, const CallArgs& args) {
  no_arguments("items", args);
  if (v.is_undefined()) return Value::list({});
  if (v.kind() != Value::Kind::kDict) throw TemplateError("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [key, item] : v.as_dict().entries()) pairs.push_back(Value::list({Value::string(key), item}, true));
  return Value::list(std::move(pairs));
}

// Jinja's attribute paths: "a.b.0" looks up a, then b, then item 0.
Value lookup_path(const Value& v, const std::string& path) {
  Value current = v;
  for (const auto& part : python_split(path, std::string("."), -1, false)) {
    int64_t index = 0;
    const auto r = std::from_chars(part.data(), part.data() + part.size(), index);
    const bool is_index = !part.empty() && r.ec == std::errc() && r.ptr == part.data() + part.size();
    current = get_item(current, is_index ? Value::integer(index) : Value::string(part));
  }
  return current;
}

Value filter_join(const Value& v, const CallArgs& args) {
  const Parameters p("join", args, {"d", "attribute"});
  const std::string separator = p[0] ? to_text(*p[0]) : "";
  const std::optional<std::string> attribute = p.optional_string(1);
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    if (!first) append_bounded(out, separator);
    first = false;
    append_bounded(out, to_text(attribute ? lookup_path(item, *attribute) : item));
  }
  return Value::string(std::move(out));
}

Value filter_default(const Value& v, const CallArgs& args) {
  const Parameters p("default", args, {"default_value", "boolean"});
  const bool use_default = v.is_undefined() || (p.boolean_or(1, false) && !v.truthy());
  if (!use_default) return v;
  return p[0] ? *p[0] : Value::string("");
}

Value filter_upper(const Value& v, const CallArgs& args) {
  no_arguments("upper", args);
  return Value::string(ascii_upper(to_text(v)));
}

Value filter_lower(const Value& v, const CallArgs& args) {
  no_arguments("lower", args);
  return Value::string(ascii_lower(to_text(v)));
}

Value filter_capitalize(const Value& v, const CallArgs& args) {
  no_arguments("capitalize", args);
  return Value::string(python_capitalize(to_text(v)));
}

Value filter_title(const Value& v, const CallArgs& args) {
  no_arguments("title", args);
  return Value::string(python_title(to_text(v)));
}

Value filter_string(const Value& v, const CallArgs& args) {
  no_arguments("string", args);
  return Value::string(to_text(v));
}

// Python's float(str): surrounding whitespace allowed, "inf"/"nan" included.
std::optional<double> parse_python_float(const std::string& text) {
  const std::string s = python_strip(text, std::nullopt, StripSide::kBoth);
  double d = 0;
  const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(first, s.data() + s.size(), d);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return d;
}

Value filter_int(const Value& v, const CallArgs& args) {
  const Parameters p("int", args, {"default", "base"});
  const Value fallback = p[0] ? *p[0] : Value::integer(0);
  const int64_t base = p.integer_or(1, 10);
  if (base < 2 || base > 36) throw TemplateError("int() base must be >= 2 and <= 36");
  if (v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kBool) return Value::integer(v.as_integral());
  std::optional<double> number;
  if (v.kind() == Value::Kind::kFloat) number = v.as_double();
  if (v.is_string()) {
    std::string digits = python_strip(v.as_string(), std::nullopt, StripSide::kBoth);
    digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
    int64_t i = 0;
    const char* first = digits.data() + (!digits.empty() && digits[0] == '+' ? 1 : 0);
    const auto r = std::from_chars(first, digits.data() + digits.size(), i, static_cast<int>(base));
    if (!digits.empty() && r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return Value::integer(i);
    number = parse_python_float(v.as_string());
  }
  if (!number || !std::isfinite(*number) || std::fabs(*number) >= 9.2e18) return fallback;
  return Value::integer(static_cast<int64_t>(*number));
}

Value filter_float(const Value& v, const CallArgs& args) {
  const Parameters p("float", args, {"default"});
  if (v.is_number()) return Value::floating(v.as_double());
  if (v.is_string())
    if (auto d = parse_python_float(v.as_string())) return Value::floating(*d);
  return p[0] ? *p[0] : Value::floating(0.0);
}

Value filter_replace(const Value& v, const CallArgs& args) {
  const Parameters p("replace", args, {"old", "new", "count"});
  return Value::string(python_replace(to_text(v), to_text(p.required(0)), to_text(p.required(1)),
                                      p[2] && !p[2]->is_none() ? p.integer_or(2, -1) : -1));
}

Value filter_reverse(const Value& v, const CallArgs& args) {
  no_arguments("reverse", args);
  if (v.is_string()) {
    std::u32string cps = to_code_points(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value::string(from_code_points(cps));
  }
  auto items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value filter_abs(const Value& v, const CallArgs& args) {
  no_arguments("abs", args);
  if (v.kind() == Value::Kind::kFloat) return Value::floating(std::fabs(v.as_double()));
  if (!v.is_number()) throw TemplateError("bad operand type for abs(): '" + std::string(v.type_name()) + "'");
  const int64_t i = v.as_integral();
  if (i == INT64_MIN) throw TemplateError("integer overflow");
  return Value::integer(i < 0 ? -i : i);
}

Value filter_safe(const Value& v, const CallArgs& args) {
  no_arguments("safe", args);
  return v;  // nothing is escaped (autoescape is off), so nothing needs marking safe
}

// select/reject/selectattr/rejectattr: keep items whose (attribute's) test result is `keep`.
Value filter_items_by_test(std::string_view name, const Value& v, const CallArgs& args, bool by_attribute,
                           bool keep) {
  const Parameters p(name, args, by_attribute ? std::vector<std::string_view>{"attribute", "test"}
                                              : std::vector<std::string_view>{"test"},
                     true);
  const size_t test_index = by_attribute ? 1 : 0;
  const std::optional<std::string> attribute = by_attribute ? std::optional(to_text(p.required(0))) : std::nullopt;
  const std::optional<std::string> test = p.optional_string(test_index);
  if (test && !is_test(*test)) throw TemplateError("no test named '" + *test + "'");
  const CallArgs test_args{p.rest(), {}};
  std::vector<Value> kept;
  for (const Value& item : iterate(v)) {
    const Value subject = attribute ? lookup_path(item, *attribute) : item;
    const bool passed = test ? apply_test(*test, subject, test_args) : subject.truthy();
    if (passed == keep) kept.push_back(item);
  }
  return Value::list(std::move(kept));
}

Value filter_select(const Value& v, const CallArgs& a) { return filter_items_by_test("select", v, a, false, true); }
Value filter_reject(const Value& v, const CallArgs& a) { return filter_items_by_test("reject", v, a, false, false); }
Value filter_selectattr(const Value& v, const CallArgs& a) {
  return filter_items_by_test("selectattr", v, a, true, true);
}
Value filter_rejectattr(const Value& v, const CallArgs& a) {
  return filter_items_by_test("rejectattr", v, a, true, false);
}

// map(attribute="x", default=...) or map("filter", args...).
Value filter_map(const Value& v, const CallArgs& args) {
  std::vector<Value> mapped;
  if (args.positional.empty()) {
    const Parameters p("map", args, {"attribute", "default"});
    const std::string attribute = to_text(p.required(0));
    for (const Value& item : iterate(v)) {
      Value found = lookup_path(item, attribute);
      mapped.push_back(found.is_undefined() && p[1] ? *p[1] : std::move(found));
    }
    return Value::list(std::move(mapped));
  }
  const std::string filter = to_text(args.positional[0]);
  if (!is_filter(filter)) throw TemplateError("no filter named '" + filter + "'");
  const CallArgs filter_args{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
  for (const Value& item : iterate(v)) mapped.push_back(apply_filter(filter, item, filter_args));
  return Value::list(std::move(mapped));
}

const std::unordered_map<std::string_view, Filter>& filters() {
  static const std::unordered_map<std::string_view, Filter> table = {
      {"tojson", filter_tojson},   {"trim", filter_trim},
      {"length", filter_length},   {"count", filter_length},
      {"first", filter_first},     {"last", filter_last},
      {"list", filter_list},       {"items", filter_items},
      {"join", filter_join},       {"default", filter_default},
      {"d", filter_default},       {"upper", filter_upper},
      {"lower", filter_lower},     {"capitalize", filter_capitalize},
      {"title", filter_title},     {"string", filter_string},
      {"int", filter_int},         {"float", filter_float},
      {"replace", filter_replace}, {"reverse", filter_reverse},
      {"abs", filter_abs},         {"safe", filter_safe},
      {"select", filter_select},   {"reject", filter_reject},
      {"selectattr", filter_selectattr}, {"rejectattr", filter_rejectattr},
      {"map", filter_map},
  };
  return table;
}

// ---- tests ----

bool test_defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool test_undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
bool test_none(const Value& v, const CallArgs&) { return v.is_none(); }
bool test_string(const Value& v, const CallArgs&) { return v.is_string(); }
bool test_mapping(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::kDict; }
bool test_number(const Value& v, const CallArgs&) { return v.is_number(); }
bool test_integer(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::kInt; }
bool test_float(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::kFloat; }
bool test_boolean(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::kBool; }
bool test_true(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::kBool && v.as_bool(); }
bool test_false(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::kBool && !v.as_bool(); }
// Undefined is callable in Jinja (calling it raises the undefined error).
bool test_callable(const Value& v, const CallArgs&) {
  return v.kind() == Value::Kind::kMethod || v.kind() == Value::Kind::kFunction || v.is_undefined();
}
// Undefined counts as iterable and as a sequence in Jinja (it iterates as empty).
bool test_iterable(const Value& v, const CallArgs&) {
  const auto k = v.kind();
  return k == Value::Kind::kUndefined || k == Value::Kind::kString || k == Value::Kind::kList ||
         k == Value::Kind::kDict;
}
bool test_sequence(const Value& v, const CallArgs& a) { return test_iterable(v, a); }

int64_t integer_operand(std::string_view test, const Value& v) {
  if (v.kind() != Value::Kind::kInt && v.kind() != Value::Kind::kBool)
    throw TemplateError("'" + std::string(test) + "' needs an integer, not '" + std::string(v.type_name()) + "'");
  return v.as_integral();
}
bool test_odd(const Value& v, const CallArgs&) { return integer_operand("odd", v) % 2 != 0; }
bool test_even(const Value& v, const CallArgs&) { return integer_operand("even", v) % 2 == 0; }
bool test_divisibleby(const Value& v, const CallArgs& a) {
  const int64_t n = integer_operand("divisibleby", single_argument("divisibleby", a));
  if (n == 0) throw TemplateError("integer division or modulo by zero");
  return n == -1 || integer_operand("divisibleby", v) % n == 0;
}

bool test_eq(const Value& v, const CallArgs& a) { return equals(v, single_argument("eq", a)); }
bool test_ne(const Value& v, const CallArgs& a) { return !equals(v, single_argument("ne", a)); }
bool test_lt(const Value& v, const CallArgs& a) { return less_than(v, single_argument("lt", a)); }
bool test_gt(const Value& v, const CallArgs& a) { return less_than(single_argument("gt", a), v); }
bool test_le(const Value& v, const CallArgs& a) { return !less_than(single_argument("le", a), v); }
bool test_ge(const Value& v, const CallArgs& a) { return !less_than(v, single_argument("ge", a)); }
bool test_in(const Value& v, const CallArgs& a) {
  for (const Value& item : iterate(single_argument("in", a)))
    if (equals(item, v)) return true;
  return false;
}
bool test_lower(const Value& v, const CallArgs&) {
  return v.is_string() && ascii_lower(v.as_string()) == v.as_string() && ascii_upper(v.as_string()) != v.as_string();
}
bool test_upper(const Value& v, const CallArgs&) {
  return v.is_string() && ascii_upper(v.as_string()) == v.as_string() && ascii_lower(v.as_string()) != v.as_string();
}

const std::unordered_map<std::string_view, Test>& tests() {
  static const std::unordered_map<std::string_view, Test> table = {
      {"defined", test_defined},   {"undefined", test_undefined}, {"none", test_none},
      {"string", test_string},     {"mapping", test_mapping},     {"number", test_number},
      {"integer", test_integer},   {"float", test_float},         {"boolean", test_boolean},
      {"true", test_true},         {"false", test_false},         {"callable", test_callable},
      {"iterable", test_iterable}, {"sequence", test_sequence},   {"odd", test_odd},
      {"even", test_even},         {"divisibleby", test_divisibleby},
      {"eq", test_eq},             {"equalto", test_eq},          {"==", test_eq},
      {"ne", test_ne},             {"!=", test_ne},               {"lt", test_lt},
      {"lessthan", test_lt},       {"<", test_lt},                {"gt", test_gt},
      {"greaterthan", test_gt},    {">", test_gt},                {"le", test_le},
      {"<=", test_le},             {"ge", test_ge},               {">=", test_ge},
      {"in", test_in},             {"lower", test_lower},         {"upper", test_upper},
  };
  return table;
}

}  // namespace

Parameters::Parameters(std::string_view callee, const CallArgs& args, std::vector<std::string_view> names, bool rest)
    : callee_(callee), names_(std::move(names)), bound_(names_.size(), nullptr) {
  const size_t given = args.positional.size();
  if (given > names_.size() && !rest)
    throw TemplateError(std::string(callee) + "() takes at most " + std::to_string(names_.size()) +
                        " argument(s) (" + std::to_string(given) + " given)");
  for (size_t i = 0; i < given; ++i) {
    if (i < names_.size()) bound_[i] = &args.positional[i];
    else rest_.push_back(args.positional[i]);
  }
  for (const auto& [name, value] : args.keyword) {
    const auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end())
      throw TemplateError(std::string(callee) + "() got an unexpected keyword argument '" + name + "'");
    const auto index = static_cast<size_t>(it - names_.begin());
    if (bound_[index])
      throw TemplateError(std::string(callee) + "() got multiple values for argument '" + name + "'");
    bound_[index] = &value;
  }
}

const Value& Parameters::required(size_t i) const {
  if (!bound_[i])
    throw TemplateError(std::string(callee_) + "() missing required argument '" + std::string(names_[i]) + "'");
  return *bound_[i];
}

std::optional<std::string> Parameters::optional_string(size_t i) const {
  if (!bound_[i] || bound_[i]->is_none()) return std::nullopt;
  if (!bound_[i]->is_string())
    throw TemplateError(std::string(callee_) + "() argument '" + std::string(names_[i]) + "' must be a string, not '" +
                        std::string(bound_[i]->type_name()) + "'");
  return bound_[i]->as_string();
}

int64_t Parameters::integer_or(size_t i, int64_t fallback) const {
  if (!bound_[i]) return fallback;
  if (bound_[i]->kind() != Value::Kind::kInt && bound_[i]->kind() != Value::Kind::kBool)
    throw TemplateError(std::string(callee_) + "() argument '" + std::string(names_[i]) + "' must be an integer, not '" +
                        std::string(bound_[i]->type_name()) + "'");
  return bound_[i]->as_integral();
}

bool Parameters::boolean_or(size_t i, bool fallback) const { return bound_[i] ? bound_[i]->truthy() : fallback; }

std::vector<Value> iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: return value.as_list().items;
    case Value::Kind::kDict: {
      std::vector<Value> keys;
      for (const auto& [key, item] : value.as_dict().entries()) keys.push_back(Value::string(key));
      return keys;
    }
    case Value::Kind::kString: {
      const std::string& s = value.as_string();
      if (code_point_count(s) > kMaxContainerItems)
        throw TemplateError("a string too long to iterate over (more than " + std::to_string(kMaxContainerItems) +
                            " characters)");
      std::vector<Value> characters;
      for (char32_t c : to_code_points(s)) characters.push_back(Value::string(from_code_points({&c, 1})));
      return characters;
    }
    default: throw TemplateError("'" + std::string(value.type_name()) + "' object is not iterable");
  }
}

bool is_filter(std::string_view name) { return filters().count(name) != 0; }

Value apply_filter(std::string_view name, const Value& operand, const CallArgs& args) {
  return filters().at(name)(operand, args);
}

bool is_test(std::string_view name) { return tests().count(name) != 0; }

bool apply_test(std::string_view name, const Value& operand, const CallArgs& args) {
  return tests().at(name)(operand, args);
}

}  // namespace nanoserve::templates::jinja
