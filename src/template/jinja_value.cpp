#include "template/jinja_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "template/jinja_pystr.h"
#include "utf8/utf8.h"

namespace nanoserve::templates::jinja {
namespace {

constexpr size_t kLinearSearchMax = 16;  // dicts up to this size are searched without an index

void check_container(size_t items, int depth) {
  if (items > kMaxContainerItems)
    throw TemplateError("a list or dict grew past the limit of " + std::to_string(kMaxContainerItems) + " items");
  if (depth > kMaxValueNesting)
    throw TemplateError("lists and dicts nest deeper than the limit of " + std::to_string(kMaxValueNesting));
}

void write_repr(const Value& value, std::string& out);

void write_text(const Value& value, std::string& out) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kBool: out += value.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: out += std::to_string(value.as_int()); return;
    case Value::Kind::kFloat: out += python_float_repr(value.as_double()); return;
    case Value::Kind::kString: append_bounded(out, value.as_string()); return;
    case Value::Kind::kList:
    case Value::Kind::kDict: write_repr(value, out); return;
    case Value::Kind::kNamespace:
      out += "<Namespace {";
      for (size_t i = 0; i < value.as_namespace().attributes().size(); ++i) {
        const auto& [name, attribute] = value.as_namespace().attributes()[i];
        if (i) out += ", ";
        append_bounded(out, python_repr(name));
        out += ": ";
        write_repr(attribute, out);
      }
      out += "}>";
      return;
    case Value::Kind::kLoop:
      out += "<LoopContext " + std::to_string(value.as_loop().index0 + 1) + "/" +
             std::to_string(value.as_loop().items->size()) + ">";
      return;
    case Value::Kind::kMethod:
      out += "<built-in method " + std::string(value.as_method().name) + " of " +
             std::string(value.as_method().receiver.type_name()) + " object>";
      return;
    case Value::Kind::kFunction: out += "<function " + std::string(value.as_function().name) + ">"; return;
  }
}

void write_repr(const Value& value, std::string& out) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: out += "Undefined"; return;
    case Value::Kind::kString: append_bounded(out, python_repr(value.as_string())); return;
    case Value::Kind::kList: {
      const List& list = value.as_list();
      out += list.is_tuple ? '(' : '[';
      for (size_t i = 0; i < list.items.size(); ++i) {
        if (i) append_bounded(out, ", ");
        write_repr(list.items[i], out);
      }
      if (list.is_tuple && list.items.size() == 1) out += ',';
      out += list.is_tuple ? ')' : ']';
      return;
    }
    case Value::Kind::kDict: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.as_dict().entries()) {
        if (!first) append_bounded(out, ", ");
        first = false;
        append_bounded(out, python_repr(key));
        out += ": ";
        write_repr(item, out);
      }
      out += '}';
      return;
    }
    default: write_text(value, out); return;
  }
}

void write_json_string(std::string_view text, bool ensure_ascii, std::string& out) {
  std::string quoted = "\"";
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    const char32_t cp = c.code_point;
    char buf[16];
    switch (cp) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\r': quoted += "\\r"; break;
      case '\t': quoted += "\\t"; break;
      case '\b': quoted += "\\b"; break;
      case '\f': quoted += "\\f"; break;
      default:
        if (cp < 0x20 || (ensure_ascii && cp >= 0x7F && cp <= 0xFFFF)) {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
          quoted += buf;
        } else if (ensure_ascii && cp > 0xFFFF) {  // a UTF-16 surrogate pair, as Python writes it
          const char32_t v = cp - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                        static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
          quoted += buf;
        } else {
          quoted.append(text.substr(pos, c.length));
        }
    }
    pos += c.length;
  }
  quoted += '"';
  append_bounded(out, quoted);
}

void write_json(const Value& value, const JsonFormat& format, int level, std::string& out) {
  // Opens a container's item: the separator, then with indent a newline and the indentation.
  auto item_prefix = [&](bool first, int item_level) {
    if (!first) append_bounded(out, format.item_separator);
    if (format.indent) {
      out += '\n';
      for (int i = 0; i < item_level; ++i) append_bounded(out, *format.indent);
    }
  };
  switch (value.kind()) {
    case Value::Kind::kNone: out += "null"; return;
    case Value::Kind::kBool: out += value.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(value.as_int()); return;
    case Value::Kind::kFloat: {
      const double d = value.as_double();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
      else out += python_float_repr(d);
      return;
    }
    case Value::Kind::kString: write_json_string(value.as_string(), format.ensure_ascii, out); return;
    case Value::Kind::kList: {
      const auto& items = value.as_list().items;
      if (items.empty()) return void(out += "[]");
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        item_prefix(i == 0, level + 1);
        write_json(items[i], format, level + 1, out);
      }
      item_prefix(true, level);
      out += ']';
      return;
    }
    case Value::Kind::kDict: {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& entry : value.as_dict().entries()) entries.push_back(&entry);
      if (entries.empty()) return void(out += "{}");
      if (format.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        item_prefix(i == 0, level + 1);
        write_json_string(entries[i]->first, format.ensure_ascii, out);
        append_bounded(out, format.key_separator);
        write_json(entries[i]->second, format, level + 1, out);
      }
      item_prefix(true, level);
      out += '}';
      return;
    }
    default:
      throw TemplateError("Object of type " + std::string(value.type_name()) + " is not JSON serializable");
  }
}

Value from_json_at(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxValueNesting)
    throw TemplateError("input JSON nests deeper than the limit of " + std::to_string(kMaxValueNesting));
  using Type = nlohmann::ordered_json::value_t;
  switch (json.type()) {
    case Type::null: return Value::none();
    case Type::boolean: return Value::boolean(json.get<bool>());
    case Type::number_integer: return Value::integer(json.get<int64_t>());
    case Type::number_unsigned: {
      const uint64_t u = json.get<uint64_t>();
      // Python keeps big integers exact; beyond int64 we keep the nearest double.
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value::integer(static_cast<int64_t>(u))
                                                    : Value::floating(static_cast<double>(u));
    }
    case Type::number_float: return Value::floating(json.get<double>());
    case Type::string: return Value::string(json.get<std::string>());
    case Type::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json_at(item, depth + 1));
      return Value::list(std::move(items));
    }
    case Type::object: {
      Dict::Entries entries;
      entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) entries.emplace_back(key, from_json_at(item, depth + 1));
      return Value::dict(std::move(entries));
    }
    default: throw TemplateError("unsupported JSON value (binary data)");
  }
}

}  // namespace

Dict::Dict(Entries entries) {
  check_container(entries.size(), 1);
  entries_.reserve(entries.size());
  std::unordered_map<std::string, size_t> positions;
  for (auto& [key, value] : entries) {
    depth_ = std::max(depth_, value.depth() + 1);
    holds_namespace_ = holds_namespace_ || value.holds_namespace();
    size_t position = entries_.size();
    if (entries.size() <= kLinearSearchMax) {
      for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].first == key) position = i;
    } else {
      position = positions.try_emplace(key, entries_.size()).first->second;
    }
    if (position < entries_.size()) entries_[position].second = std::move(value);
    else entries_.emplace_back(std::move(key), std::move(value));
  }
  check_container(entries_.size(), depth_);
  if (entries_.size() > kLinearSearchMax) index_ = std::move(positions);
}

const Value* Dict::find(std::string_view key) const {
  if (index_.empty()) {
    for (const auto& [k, v] : entries_)
      if (k == key) return &v;
    return nullptr;
  }
  const auto it = index_.find(std::string(key));
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value* Namespace::find(std::string_view name) const {
  for (const auto& [k, v] : attributes_)
    if (k == name) return &v;
  return nullptr;
}

void Namespace::set(const std::string& name, Value value) {
  for (auto& [k, v] : attributes_)
    if (k == name) return void(v = std::move(value));
  attributes_.emplace_back(name, std::move(value));
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  auto list = std::make_shared<List>();
  for (const Value& item : items) {
    list->depth = std::max(list->depth, item.depth() + 1);
    list->holds_namespace = list->holds_namespace || item.holds_namespace();
  }
  check_container(items.size(), list->depth);
  list->items = std::move(items);
  list->is_tuple = is_tuple;
  return Value(Data(std::shared_ptr<const List>(std::move(list))));
}

Value Value::dict(Dict::Entries entries) {
  return Value(Data(std::make_shared<const Dict>(std::move(entries))));
}

Value Value::method(Value receiver, std::string_view name) {
  return Value(Data(std::make_shared<const BoundMethod>(BoundMethod{std::move(receiver), name})));
}

int64_t Value::as_integral() const { return kind() == Kind::kBool ? int64_t{as_bool()} : as_int(); }

double Value::as_double() const {
  return kind() == Kind::kFloat ? std::get<double>(data_) : static_cast<double>(as_integral());
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_double() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return !as_list().items.empty();
    case Kind::kDict: return !as_dict().entries().empty();
    default: return true;
  }
}

std::string_view Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return as_list().is_tuple ? "tuple" : "list";
    case Kind::kDict: return "dict";
    case Kind::kNamespace: return "Namespace";
    case Kind::kLoop: return "LoopContext";
    case Kind::kMethod: return "builtin_function_or_method";
    case Kind::kFunction: return "function";
  }
  return "?";
}

int Value::depth() const {
  if (kind() == Kind::kList) return as_list().depth;
  if (kind() == Kind::kDict) return as_dict().depth();
  return 0;
}

bool Value::holds_namespace() const {
  if (kind() == Kind::kNamespace || kind() == Kind::kLoop) return true;
  if (kind() == Kind::kList) return as_list().holds_namespace;
  if (kind() == Kind::kDict) return as_dict().holds_namespace();
  return false;
}

bool equals(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Kind::kFloat || b.kind() == Kind::kFloat) return a.as_double() == b.as_double();
    return a.as_integral() == b.as_integral();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.as_string() == b.as_string();
    case Kind::kList: {
      const List &x = a.as_list(), &y = b.as_list();
      if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i)
        if (!equals(x.items[i], y.items[i])) return false;
      return true;
    }
    case Kind::kDict: {
      const Dict &x = a.as_dict(), &y = b.as_dict();
      if (x.entries().size() != y.entries().size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.find(key);
        if (!other || !equals(value, *other)) return false;
      }
      return true;
    }
    case Kind::kNamespace: return &a.as_namespace() == &b.as_namespace();
    case Kind::kLoop: return &a.as_loop() == &b.as_loop();
    case Kind::kMethod: return &a.as_method() == &b.as_method();
    case Kind::kFunction: return a.as_function().name == b.as_function().name;
    default: return false;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat) return a.as_double() < b.as_double();
    return a.as_integral() < b.as_integral();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // code point order, as in Python
  if (a.kind() == Value::Kind::kList && b.kind() == Value::Kind::kList) {
    const auto &x = a.as_list().items, &y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equals(x[i], y[i])) return less_than(x[i], y[i]);
    return x.size() < y.size();
  }
  throw TemplateError("'<' not supported between instances of '" + std::string(a.type_name()) + "' and '" +
                      std::string(b.type_name()) + "'");
}

std::string to_text(const Value& value) {
  if (value.is_string()) return value.as_string();
  std::string out;
  write_text(value, out);
  return out;
}

std::string to_repr(const Value& value) {
  std::string out;
  write_repr(value, out);
  return out;
}

std::string to_json(const Value& value, const JsonFormat& format) {
  std::string out;
  write_json(value, format, 0, out);
  return out;
}

Value from_json(const nlohmann::ordered_json& json) { return from_json_at(json, 1); }

}  // namespace nanoserve::templates::jinja
