// Attribute and item lookup, methods of str and dict, and the global functions.
#include <algorithm>
#include <array>
#include <chrono>
#include <vector>

#include "template/jinja_builtins.h"
#include "template/jinja_pystr.h"

namespace nanoserve::templates::jinja {
namespace {

constexpr std::array<std::string_view, 11> kStringMethods = {
    "startswith", "endswith", "strip", "lstrip", "rstrip", "split", "rsplit", "replace", "upper", "lower", "title"};
// Every attribute of a Python dict: `d.items` is the method even when d has a key "items".
// Only get, items, keys and values can be called (the others change the dict or are rare).
constexpr std::array<std::string_view, 11> kDictMethods = {
    "get", "items", "keys", "values", "clear", "copy", "fromkeys", "pop", "popitem", "setdefault", "update"};

template <size_t N>
std::optional<std::string_view> find_name(const std::array<std::string_view, N>& names, std::string_view name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return *it;  // the static copy, which a BoundMethod may keep
}

std::string no_attribute(const Value& object, std::string_view name) {
  // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "literal" + std::string(...).
  std::string message = "'";
  message.append(object.type_name()).append(" object' has no attribute '").append(name).append("'");
  return message;
}

// str.startswith / endswith take one prefix or a tuple of them.
bool affix_matches(const std::string& text, const Value& affixes, bool at_start) {
  auto matches = [&](const Value& affix) {
    if (!affix.is_string()) throw TemplateError("startswith/endswith arguments must be strings");
    const std::string& a = affix.as_string();
    return a.size() <= text.size() && (at_start ? text.compare(0, a.size(), a) == 0
                                                : text.compare(text.size() - a.size(), a.size(), a) == 0);
  };
  if (affixes.kind() != Value::Kind::kList) return matches(affixes);
  return std::any_of(affixes.as_list().items.begin(), affixes.as_list().items.end(), matches);
}

Value string_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto& part : parts) items.push_back(Value::string(std::move(part)));
  return Value::list(std::move(items));
}

Value call_string_method(const std::string& text, std::string_view name, const CallArgs& args) {
  if (name == "startswith" || name == "endswith") {
    const Parameters p(name, args, {"prefix"});
    return Value::boolean(affix_matches(text, p.required(0), name == "startswith"));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Parameters p(name, args, {"chars"});
    const StripSide side = name == "strip" ? StripSide::kBoth : name == "lstrip" ? StripSide::kLeft : StripSide::kRight;
    return Value::string(python_strip(text, p.optional_string(0), side));
  }
  if (name == "split" || name == "rsplit") {
    const Parameters p(name, args, {"sep", "maxsplit"});
    return string_list(python_split(text, p.optional_string(0), p.integer_or(1, -1), name == "rsplit"));
  }
  if (name == "replace") {
    const Parameters p(name, args, {"old", "new", "count"});
    const Value &old = p.required(0), &replacement = p.required(1);
    if (!old.is_string() || !replacement.is_string()) throw TemplateError("replace() arguments must be strings");
    return Value::string(python_replace(text, old.as_string(), replacement.as_string(), p.integer_or(2, -1)));
  }
  Parameters(name, args, {});
  if (name == "upper") return Value::string(ascii_upper(text));
  if (name == "lower") return Value::string(ascii_lower(text));
  return Value::string(python_title(text));
}

Value call_dict_method(const Dict& dict, std::string_view name, const CallArgs& args) {
  if (name == "get") {
    const Parameters p(name, args, {"key", "default"});
    const Value& key = p.required(0);
    const Value* found = key.is_string() ? dict.find(key.as_string()) : nullptr;
    return found ? *found : p[1] ? *p[1] : Value::none();
  }
  if (name != "items" && name != "keys" && name != "values")
    throw TemplateError("dict." + std::string(name) + "() is not supported (templates cannot change data)");
  Parameters(name, args, {});
  std::vector<Value> out;
  for (const auto& [key, value] : dict.entries()) {
    if (name == "items") out.push_back(Value::list({Value::string(key), value}, true));
    else out.push_back(name == "keys" ? Value::string(key) : value);
  }
  return Value::list(std::move(out));
}

// ---- globals ----

[[noreturn]] void raise_exception(const CallArgs& args) {
  const Parameters p("raise_exception", args, {"message"});
  throw RenderError(to_text(p.required(0)));
}

Value strftime_now(const CallArgs& args, const std::optional<std::tm>& fixed_now) {
  const Parameters p("strftime_now", args, {"format"});
  const std::optional<std::string> format = p.optional_string(0);
  if (!format) throw TemplateError("strftime_now() missing required argument 'format'");
  std::tm now{};
  if (fixed_now) {
    now = *fixed_now;
  } else {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    localtime_r(&t, &now);
  }
  if (format->empty()) return Value::string("");
  // strftime reports 0 both for "too small" and for an empty result: grow a few times, then accept "".
  for (size_t size = 256; size <= (size_t{1} << 20); size *= 16) {
    std::string out(size, '\0');
    const size_t n = std::strftime(out.data(), out.size(), format->c_str(), &now);
    if (n > 0) return Value::string(out.substr(0, n));
  }
  return Value::string("");
}

// namespace(mapping?, name=value, ...)
Value make_namespace(const CallArgs& args) {
  if (args.positional.size() > 1) throw TemplateError("namespace() takes at most 1 positional argument");
  Value ns = Value::new_namespace();
  auto add = [&](const std::string& name, const Value& value) {
    if (value.holds_namespace()) throw TemplateError("a namespace cannot hold a namespace or loop");
    ns.as_namespace().set(name, value);
  };
  if (!args.positional.empty()) {
    const Value& initial = args.positional[0];
    if (initial.kind() != Value::Kind::kDict) throw TemplateError("namespace() argument must be a mapping");
    for (const auto& [name, value] : initial.as_dict().entries()) add(name, value);
  }
  for (const auto& [name, value] : args.keyword) add(name, value);
  return ns;
}

Value range(const CallArgs& args) {
  const Parameters p("range", args, {"start", "stop", "step"});
  const bool one_argument = !p[1];
  const int64_t start = one_argument ? 0 : p.integer_or(0, 0);
  const int64_t stop = one_argument ? p.integer_or(0, 0) : p.integer_or(1, 0);
  const int64_t step = p.integer_or(2, 1);
  if (step == 0) throw TemplateError("range() arg 3 must not be zero");
  std::vector<Value> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (out.size() == kMaxContainerItems)
      throw TemplateError("range() longer than the limit of " + std::to_string(kMaxContainerItems) + " items");
    out.push_back(Value::integer(i));
    if ((step > 0 && i > INT64_MAX - step) || (step < 0 && i < INT64_MIN - step)) break;  // next i overflows
  }
  return Value::list(std::move(out));
}

Value make_dict(const CallArgs& args) {
  if (!args.positional.empty()) throw TemplateError("dict() takes keyword arguments only");
  Dict::Entries entries(args.keyword.begin(), args.keyword.end());
  return Value::dict(std::move(entries));
}

constexpr std::array<std::string_view, 5> kGlobalFunctions = {"raise_exception", "strftime_now", "namespace", "range",
                                                              "dict"};

Value loop_attribute(const Value& loop, std::string_view name) {
  const LoopState& state = loop.as_loop();
  const auto& items = *state.items;
  const int64_t i = state.index0, length = static_cast<int64_t>(items.size());
  if (name == "index") return Value::integer(i + 1);
  if (name == "index0") return Value::integer(i);
  if (name == "revindex") return Value::integer(length - i);
  if (name == "revindex0") return Value::integer(length - i - 1);
  if (name == "first") return Value::boolean(i == 0);
  if (name == "last") return Value::boolean(i == length - 1);
  if (name == "length") return Value::integer(length);
  if (name == "depth") return Value::integer(1);
  if (name == "depth0") return Value::integer(0);
  if (name == "previtem" && i > 0) return items[static_cast<size_t>(i - 1)];
  if (name == "nextitem" && i + 1 < length) return items[static_cast<size_t>(i + 1)];
  return Value::undefined(no_attribute(loop, name));
}

}  // namespace

Value get_attribute(const Value& object, std::string_view name) {
  switch (object.kind()) {
    case Value::Kind::kUndefined: throw TemplateError(object.as_undefined().description);
    case Value::Kind::kDict: {
      if (auto method = find_name(kDictMethods, name)) return Value::method(object, *method);
      if (const Value* found = object.as_dict().find(name)) return *found;
      return Value::undefined(no_attribute(object, name));
    }
    case Value::Kind::kString:
      if (auto method = find_name(kStringMethods, name)) return Value::method(object, *method);
      return Value::undefined(no_attribute(object, name));
    case Value::Kind::kNamespace:
      if (const Value* found = object.as_namespace().find(name)) return *found;
      return Value::undefined(no_attribute(object, name));
    case Value::Kind::kLoop: return loop_attribute(object, name);
    default: return Value::undefined(no_attribute(object, name));
  }
}

Value get_item(const Value& object, const Value& key) {
  const bool integral_key = key.kind() == Value::Kind::kInt || key.kind() == Value::Kind::kBool;
  switch (object.kind()) {
    case Value::Kind::kUndefined: throw TemplateError(object.as_undefined().description);
    case Value::Kind::kList:
    case Value::Kind::kString: {
      if (!integral_key) break;
      const bool is_list = object.kind() == Value::Kind::kList;
      const std::u32string code_points = is_list ? std::u32string() : to_code_points(object.as_string());
      const auto size = static_cast<int64_t>(is_list ? object.as_list().items.size() : code_points.size());
      int64_t index = key.as_integral();
      if (index < 0) index += size;
      if (index < 0 || index >= size) return Value::undefined(std::string(object.type_name()) + " index out of range");
      if (is_list) return object.as_list().items[static_cast<size_t>(index)];
      return Value::string(from_code_points({&code_points[static_cast<size_t>(index)], 1}));
    }
    case Value::Kind::kDict:
      if (key.is_string())
        if (const Value* found = object.as_dict().find(key.as_string())) return *found;
      break;
    default: break;
  }
  // Jinja falls back to the attribute of that name (d["items"] is the method when no key matches).
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(std::string("'").append(object.type_name()).append(" object' has no item ") + to_repr(key));
}

Value call_method(const BoundMethod& method, const CallArgs& args) {
  const Value& receiver = method.receiver;
  if (receiver.is_string()) return call_string_method(receiver.as_string(), method.name, args);
  return call_dict_method(receiver.as_dict(), method.name, args);
}

std::optional<std::string_view> global_function_name(std::string_view name) {
  return find_name(kGlobalFunctions, name);
}

Value call_global_function(std::string_view name, const CallArgs& args, const std::optional<std::tm>& fixed_now) {
  if (name == "raise_exception") raise_exception(args);
  if (name == "strftime_now") return strftime_now(args, fixed_now);
  if (name == "namespace") return make_namespace(args);
  if (name == "range") return range(args);
  return make_dict(args);
}

}  // namespace nanoserve::templates::jinja
