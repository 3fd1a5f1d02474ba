#include "grammar/json_schema.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "grammar/automaton.h"
#include "grammar/json_text.h"
#include "grammar/regex.h"

namespace nanoserve::grammar {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string> kAnnotations = {"title",    "description", "default",  "examples", "$schema",
                                            "$id",      "$comment",    "deprecated", "readOnly", "writeOnly"};
const std::set<std::string> kSupported = {
    "type",      "enum",      "const",     "properties", "required",         "additionalProperties",
    "items",     "minItems",  "maxItems",  "minLength",  "maxLength",        "pattern",
    "minimum",   "maximum",   "exclusiveMinimum",        "exclusiveMaximum", "anyOf",
    "oneOf",     "allOf",     "$ref",      "$defs",      "definitions"};
// Keywords that leave no room for others beside them (annotations and $defs aside).
const std::set<std::string> kAlone = {"$ref", "anyOf", "oneOf", "allOf"};

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// A JSON number as a double, clamped well past the 16 digits a grammar writes.
double bound_of(const Json& v, const std::string& path) {
  if (!v.is_number()) throw SchemaError(path, "'" + path + "' must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw SchemaError(path, "'" + path + "' must be finite");
  return std::fmax(-1e17, std::fmin(1e17, d));
}

int count_of(const Json& s, const char* key, const std::string& path) {
  const auto it = s.find(key);
  if (it == s.end()) return -1;
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    throw SchemaError(join(path, key), std::string("'") + key + "' must be a non-negative integer");
  const int64_t n = it->get<int64_t>();
  return n > 1'000'000 ? 1'000'000 : static_cast<int>(n);  // past the grammar size limit anyway
}

class Compiler {
 public:
  Compiler(const Json& root, GrammarBuilder& builder) : root_(root), builder_(builder) {}

  uint32_t compile() {
    const uint32_t top = builder_.new_rule();
    builder_.define(top, value(root_, "", 0));
    finish_refs();
    return top;
  }

  // Compiles the $ref targets met so far, each once (they may meet more).
  void finish_refs() {
    while (!pending_.empty()) {
      const auto [rule, target, path] = pending_.back();
      pending_.pop_back();
      builder_.define(rule, value(*target, path, 0));
    }
  }

 private:
  Expr value(const Json& s, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth)
      throw SchemaError(path, "the schema nests deeper than " + std::to_string(kMaxSchemaDepth) + " levels");
    if (s.is_boolean()) {
      if (!s.get<bool>()) throw SchemaError(path, "the schema false matches nothing: there is nothing to write");
      return rule_ref(any().value);
    }
    if (!s.is_object()) throw SchemaError(path, "a schema must be an object or a boolean");
    bool alone = false;
    for (const auto& [key, v] : s.items()) {
      if (kAnnotations.contains(key)) continue;
      if (!kSupported.contains(key)) throw SchemaError(join(path, key), "the keyword '" + key + "' is not supported");
      alone = alone || kAlone.contains(key);
    }
    if (alone) return combination(s, path, depth);

    std::vector<std::string> types;
    if (const auto t = s.find("type"); t != s.end()) {
      for (const Json& name : t->is_array() ? *t : Json::array({*t})) {
        if (!name.is_string() || !is_of_type_name(name.get<std::string>()))
          throw SchemaError(join(path, "type"), "'type' must name JSON types (string, number, integer, boolean, "
                                                "null, object, array)");
        types.push_back(name.get<std::string>());
      }
    }
    if (s.contains("const")) return constants(Json::array({s["const"]}), s, join(path, "const"), depth);
    if (const auto e = s.find("enum"); e != s.end()) {
      if (!e->is_array() || e->empty()) throw SchemaError(join(path, "enum"), "'enum' must be a non-empty array");
      return constants(*e, s, join(path, "enum"), depth);
    }
    if (types.empty()) types.push_back(implied_type(s));
    std::vector<Expr> choices;
    for (const std::string& type : types) choices.push_back(of_type(type, s, path, depth));
    return alt(std::move(choices));
  }

  static bool is_of_type_name(const std::string& t) {
    return t == "string" || t == "number" || t == "integer" || t == "boolean" || t == "null" || t == "object" ||
           t == "array";
  }

  // No "type": the kind the keywords speak of, or any value.
  static std::string implied_type(const Json& s) {
    if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties")) return "object";
    if (s.contains("items") || s.contains("minItems") || s.contains("maxItems")) return "array";
    if (s.contains("pattern") || s.contains("minLength") || s.contains("maxLength")) return "string";
    if (s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") ||
        s.contains("exclusiveMaximum"))
      return "number";
    return "any";
  }

  Expr of_type(const std::string& type, const Json& s, const std::string& path, int depth) {
    if (type == "object") return object(s, path, depth);
    if (type == "array") return array(s, path, depth);
    if (type == "string") return string(s, path);
    if (type == "integer") return integer(s, path);
    if (type == "number") return number(s, path);
    if (type == "boolean") return alt({literal("true"), literal("false")});
    if (type == "null") return literal("null");
    return rule_ref(any().value);
  }

  // enum / const: the values, those the schema's other keywords (type, maxLength, ...) allow
  // too, checked against the grammar of the schema without them. (An object value whose keys
  // are not in the declared order is left out: the grammar writes them in that order.)
  Expr constants(const Json& values, const Json& s, const std::string& path, int depth) {
    Json rest = s;
    rest.erase("enum");
    rest.erase("const");
    bool constrained = false;
    for (const auto& [key, v] : rest.items()) constrained = constrained || !kAnnotations.contains(key);
    std::shared_ptr<const Grammar> others;
    if (constrained) {
      GrammarBuilder builder;
      Compiler sub(root_, builder);
      const uint32_t rule = builder.add_rule(sub.value(rest, path, depth + 1));
      sub.finish_refs();
      others = std::make_shared<const Grammar>(builder.build(rule));
    }
    std::vector<Expr> choices;
    for (const Json& v : values) {
      const std::string text = v.dump();
      if (!others || allows(others, text)) choices.push_back(literal(text));
    }
    if (choices.empty()) throw SchemaError(path, "no value of '" + path + "' satisfies the schema's other keywords");
    return alt(std::move(choices));
  }

  static bool allows(std::shared_ptr<const Grammar> g, std::string_view text) {
    Automaton a(std::move(g));
    Automaton::State state = a.start();
    for (char c : text) state = a.next(state, static_cast<uint8_t>(c));
    return a.accepts(state);
  }

  // $ref, anyOf, oneOf or allOf, with nothing but annotations and $defs beside it.
  Expr combination(const Json& s, const std::string& path, int depth) {
    std::string keyword;
    for (const auto& [key, v] : s.items()) {
      if (kAnnotations.contains(key) || key == "$defs" || key == "definitions") continue;
      if (!keyword.empty())
        throw SchemaError(join(path, key), "'" + key + "' beside '" + keyword + "' is not supported");
      keyword = key;
    }
    const Json& v = s[keyword];
    const std::string at = join(path, keyword);
    if (keyword == "$ref") return rule_ref(ref_rule(v, at));
    if (!v.is_array() || v.empty()) throw SchemaError(at, "'" + keyword + "' must be a non-empty array of schemas");
    if (keyword == "allOf") {
      if (v.size() != 1) throw SchemaError(at, "'allOf' with more than one schema is not supported");
      return value(v[0], join(at, "0"), depth + 1);
    }
    std::vector<Expr> choices;
    for (size_t i = 0; i < v.size(); ++i)
      choices.push_back(rule_ref(builder_.add_rule(value(v[i], join(at, std::to_string(i)), depth + 1))));
    return alt(std::move(choices));
  }

  uint32_t ref_rule(const Json& ref, const std::string& path) {
    if (!ref.is_string() || !ref.get<std::string>().starts_with("#"))
      throw SchemaError(path, "'$ref' must point inside the schema (\"#\", \"#/$defs/...\")");
    const std::string target = ref.get<std::string>();
    if (const auto known = refs_.find(target); known != refs_.end()) return known->second;
    const Json* node = &root_;
    if (target != "#") {
      try {
        node = &root_.at(Json::json_pointer(target.substr(1)));
      } catch (const Json::exception&) {
        throw SchemaError(path, "'$ref' \"" + target + "\" does not name a schema in this document");
      }
    }
    const uint32_t rule = builder_.new_rule();
    refs_.emplace(target, rule);
    pending_.emplace_back(rule, node, path);
    return rule;
  }

  Expr object(const Json& s, const std::string& path, int depth) {
    const Json empty_object = Json::object();
    const auto props_it = s.find("properties");
    const Json& props = props_it != s.end() ? *props_it : empty_object;
    if (!props.is_object()) throw SchemaError(join(path, "properties"), "'properties' must be an object");
    std::set<std::string> required;
    if (const auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) throw SchemaError(join(path, "required"), "'required' must be an array of names");
      for (const Json& name : *r) {
        if (!name.is_string()) throw SchemaError(join(path, "required"), "'required' must be an array of names");
        required.insert(name.get<std::string>());
      }
    }
    struct Property {
      std::string name;
      Expr schema;
      bool required;
    };
    std::vector<Property> properties;
    for (const auto& [name, schema] : props.items())
      properties.push_back({name, value(schema, join(join(path, "properties"), name), depth + 1), required.contains(name)});
    // Required but not described: additionalProperties says what the value may be.
    for (const std::string& name : required)
      if (!props.contains(name)) properties.push_back({name, additional_value(s, path, depth), true});

    const Expr ws = json_whitespace();
    if (properties.empty()) return additional_properties(s, path, depth);
    // First_i: the members from i on, none written yet; After_i: from i on, after a member.
    const size_t n = properties.size();
    std::vector<uint32_t> member(n);
    for (size_t i = 0; i < n; ++i)
      member[i] = builder_.add_rule(seq({literal(Json(properties[i].name).dump()), ws, literal(":"), ws,
                                         std::move(properties[i].schema), ws}));
    uint32_t after = builder_.add_rule(empty()), first = after;
    for (size_t i = n; i-- > 0;) {
      const Expr comma_member = seq({literal(","), ws, rule_ref(member[i])});
      const Expr here = seq({rule_ref(member[i]), rule_ref(after)});
      first = builder_.add_rule(properties[i].required ? here : alt({here, rule_ref(first)}));
      after = builder_.add_rule(
          seq({properties[i].required ? comma_member : optional(comma_member), rule_ref(after)}));
    }
    return seq({literal("{"), ws, rule_ref(first), literal("}")});
  }

  // An object with no declared properties: any members whose values follow
  // additionalProperties (absent or true: any value; false: none).
  Expr additional_properties(const Json& s, const std::string& path, int depth) {
    const auto a = s.find("additionalProperties");
    const Expr ws = json_whitespace();
    if (a != s.end() && a->is_boolean() && !a->get<bool>()) return seq({literal("{"), ws, literal("}")});
    const Expr value_expr = additional_value(s, path, depth);
    const Expr member = rule_ref(
        builder_.add_rule(seq({rule_ref(any().string), ws, literal(":"), ws, value_expr, ws})));
    return seq({literal("{"), ws, optional(seq({member, star(seq({literal(","), ws, member}))})), literal("}")});
  }

  // The value of a member the properties do not describe: any (additionalProperties absent or
  // true) or additionalProperties' schema (false: none, refused).
  Expr additional_value(const Json& s, const std::string& path, int depth) {
    const auto a = s.find("additionalProperties");
    if (a == s.end()) return rule_ref(any().value);
    if (a->is_boolean() && !a->get<bool>())
      throw SchemaError(join(path, "required"), "a required property is neither in 'properties' nor allowed by "
                                                "'additionalProperties': false");
    return rule_ref(builder_.add_rule(value(*a, join(path, "additionalProperties"), depth + 1)));
  }

  Expr array(const Json& s, const std::string& path, int depth) {
    const int min = std::max(0, count_of(s, "minItems", path)), max = count_of(s, "maxItems", path);
    if (max >= 0 && max < min) throw SchemaError(join(path, "maxItems"), "'maxItems' is less than 'minItems'");
    const Expr ws = json_whitespace();
    if (max == 0) return seq({literal("["), ws, literal("]")});
    const auto items = s.find("items");
    if (items != s.end() && items->is_boolean() && !items->get<bool>()) {  // no item may be: only []
      if (min > 0) throw SchemaError(join(path, "items"), "'items': false leaves no room for 'minItems'");
      return seq({literal("["), ws, literal("]")});
    }
    const Expr item_value = items == s.end() ? rule_ref(any().value) : value(*items, join(path, "items"), depth + 1);
    const Expr item = rule_ref(builder_.add_rule(seq({item_value, ws})));
    Expr body = seq({item, repeat(seq({literal(","), ws, item}), std::max(0, min - 1),
                                  max < 0 ? Expr::kUnbounded : max - 1)});
    if (min == 0) body = optional(std::move(body));
    return seq({literal("["), ws, std::move(body), literal("]")});
  }

  Expr string(const Json& s, const std::string& path) {
    const int min = count_of(s, "minLength", path), max = count_of(s, "maxLength", path);
    if (const auto p = s.find("pattern"); p != s.end()) {
      const std::string at = join(path, "pattern");
      if (!p->is_string()) throw SchemaError(at, "'pattern' must be a string");
      if (min >= 0 || max >= 0)
        throw SchemaError(at, "'pattern' together with 'minLength' or 'maxLength' is not supported");
      try {
        return seq({literal("\""), json_string_matching(p->get<std::string>(), rule_ref(character())), literal("\"")});
      } catch (const RegexError& e) {
        throw SchemaError(at, e.what());
      }
    }
    if (max >= 0 && max < min) throw SchemaError(join(path, "maxLength"), "'maxLength' is less than 'minLength'");
    return seq({literal("\""), repeat(rule_ref(character()), std::max(0, min), max < 0 ? Expr::kUnbounded : max),
                literal("\"")});
  }

  // The bounds of a number: [lo, hi] with each end inclusive or not (nullopt: none).
  struct Bounds {
    std::optional<double> lo, hi;
    bool lo_exclusive = false, hi_exclusive = false;
  };
  static Bounds bounds(const Json& s, const std::string& path) {
    Bounds b;
    auto tighten = [&](const char* key, bool exclusive, bool lower) {
      const auto it = s.find(key);
      if (it == s.end()) return;
      const double v = bound_of(*it, join(path, key));
      std::optional<double>& end = lower ? b.lo : b.hi;
      bool& end_exclusive = lower ? b.lo_exclusive : b.hi_exclusive;
      if (!end || (lower ? v > *end : v < *end) || (v == *end && exclusive)) {
        end = v;
        end_exclusive = exclusive;
      }
    };
    tighten("minimum", false, true);
    tighten("exclusiveMinimum", true, true);
    tighten("maximum", false, false);
    tighten("exclusiveMaximum", true, false);
    return b;
  }

  // The integers inside `b`.
  static std::pair<std::optional<int64_t>, std::optional<int64_t>> integer_bounds(const Bounds& b) {
    std::optional<int64_t> lo, hi;
    if (b.lo) lo = static_cast<int64_t>(b.lo_exclusive ? std::floor(*b.lo) + 1 : std::ceil(*b.lo));
    if (b.hi) hi = static_cast<int64_t>(b.hi_exclusive ? std::ceil(*b.hi) - 1 : std::floor(*b.hi));
    return {lo, hi};
  }

  static Expr integer(const Json& s, const std::string& path) {
    const auto [lo, hi] = integer_bounds(bounds(s, path));
    if (lo && hi && *lo > *hi) throw SchemaError(path, "no integer lies between the schema's minimum and maximum");
    const int64_t largest = 9'999'999'999'999'999;  // 16 digits: what the grammar writes
    if ((lo && *lo > largest) || (hi && *hi < -largest))
      throw SchemaError(path, "integer bounds beyond 16 digits are not supported");
    return json_integer(lo, hi);
  }

  // A bounded number is written as an integer, or as k.digits with k an integer such that
  // every fraction keeps it inside the bounds (a subset of the numbers in range, without
  // exponents).
  static Expr number(const Json& s, const std::string& path) {
    const Bounds b = bounds(s, path);
    if (!b.lo && !b.hi) return json_number();
    const double kFar = 9'999'999'999'999'998;  // within the 16 digits the grammar writes
    const auto [lo, hi] = integer_bounds(b);
    const int64_t int_lo = lo.value_or(static_cast<int64_t>(-kFar)), int_hi = hi.value_or(static_cast<int64_t>(kFar));
    const auto fraction = seq({literal("."), repeat(bytes(ByteSet::range('0', '9')), 1, kMaxFractionDigits)});
    std::vector<Expr> parts;
    if (int_lo <= int_hi) parts.push_back(json_integer(int_lo, int_hi));
    // k.f in [k, k+1): k >= int_lo and k + 1 <= hi.
    const int64_t k_lo = std::max<int64_t>(0, int_lo), k_hi = static_cast<int64_t>(std::floor(b.hi.value_or(kFar))) - 1;
    if (k_lo <= k_hi) parts.push_back(seq({json_integer(k_lo, k_hi), fraction}));
    // -m.f in (-(m+1), -m]: -m <= int_hi and -(m+1) >= lo.
    const int64_t m_lo = std::max<int64_t>(1, -int_hi), m_hi = static_cast<int64_t>(std::floor(-b.lo.value_or(-kFar))) - 1;
    if (m_lo <= m_hi) parts.push_back(seq({literal("-"), json_integer(m_lo, m_hi), fraction}));
    if (parts.empty())
      throw SchemaError(path, "no number this server can write lies between the schema's minimum and maximum "
                              "(a range narrower than 1 around no integer)");
    return alt(std::move(parts));
  }

  const AnyJsonRules& any() {
    if (!any_) any_ = add_any_json_rules(builder_);
    return *any_;
  }
  uint32_t character() {
    if (!character_) character_ = builder_.add_rule(json_string_character());
    return *character_;
  }

  const Json& root_;
  GrammarBuilder& builder_;
  std::optional<AnyJsonRules> any_;
  std::optional<uint32_t> character_;
  std::map<std::string, uint32_t> refs_;
  std::vector<std::tuple<uint32_t, const Json*, std::string>> pending_;
};

}  // namespace

Grammar compile_json_schema(const nlohmann::ordered_json& schema) {
  GrammarBuilder builder;
  const uint32_t root = Compiler(schema, builder).compile();
  Grammar g = builder.build(root);
  if (g.matches_nothing())
    throw SchemaError("", "no JSON this server can write satisfies the schema (it refers only to itself, or its "
                          "bounds leave nothing)");
  return g;
}

uint32_t add_json_schema_rule(GrammarBuilder& builder, const nlohmann::ordered_json& schema) {
  return Compiler(schema, builder).compile();
}

Grammar any_json_object_grammar() {
  GrammarBuilder builder;
  const AnyJsonRules rules = add_any_json_rules(builder);
  return builder.build(rules.object);
}

}  // namespace nanoserve::grammar
