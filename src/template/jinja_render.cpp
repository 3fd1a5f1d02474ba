#include "template/jinja_render.h"

#include <algorithm>
#include <unordered_map>

#include "template/jinja_builtins.h"
#include "template/jinja_lexer.h"
#include "template/jinja_operators.h"
#include "template/jinja_pystr.h"

namespace nanoserve::templates::jinja {
namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

enum class Flow { kNormal, kBreak, kContinue };

class Renderer {
 public:
  Renderer(std::string_view source, const std::optional<std::tm>& fixed_now) : source_(source), fixed_now_(fixed_now) {}

  std::string run(const Body& body, const Dict::Entries& variables) {
    scopes_.emplace_back(variables.begin(), variables.end());
    std::string output;
    out_ = &output;
    exec(body);
    return output;
  }

 private:
  using Scope = std::unordered_map<std::string, Value>;

  // ---- accounting: every evaluation and iteration is a step; strings cost their length ----
  void count_step() {
    if (++steps_ > kMaxRenderSteps)
      throw TemplateError("the template ran more than " + std::to_string(kMaxRenderSteps) + " steps");
  }
  void count_value(const Value& v) {
    count_step();
    if (v.is_string() && (string_work_ += v.as_string().size()) > kMaxRenderStringWork)
      throw TemplateError("the template copied more than " + std::to_string(kMaxRenderStringWork >> 30) +
                          " GiB of strings");
  }

  // A TemplateError from the builtins gets the location of the node it came from; the
  // innermost node wins because the error is final (RenderError) once located.
  template <typename F>
  auto located(size_t offset, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const RenderError&) {
      throw;
    } catch (const TemplateError& e) {
      throw RenderError(location_prefix(source_, offset) + e.what());
    }
  }

  // ---- variables ----
  Value lookup(const std::string& name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
      if (const auto it = scope->find(name); it != scope->end()) return it->second;
    if (const auto global = global_function_name(name)) return Value::function(*global);
    return Value::undefined("'" + name + "' is undefined");
  }

  void bind(const node::Target& target, const Value& value) {
    Scope& scope = scopes_.back();
    if (!target.unpack) return void(scope[target.names[0]] = value);
    const std::vector<Value> parts = iterate(value);
    if (parts.size() != target.names.size())
      throw TemplateError((parts.size() > target.names.size() ? "too many" : "not enough") +
                          std::string(" values to unpack (expected ") + std::to_string(target.names.size()) +
                          ", got " + std::to_string(parts.size()) + ")");
    for (size_t i = 0; i < parts.size(); ++i) scope[target.names[i]] = parts[i];
  }

  // ---- statements ----
  Flow exec(const Body& body) {
    for (const Stmt& stmt : body)
      if (const Flow flow = exec(stmt); flow != Flow::kNormal) return flow;
    return Flow::kNormal;
  }

  Flow exec(const Stmt& stmt) {
    return located(stmt.offset, [&] {
      return std::visit(
          Overloaded{
              [&](const node::Text& n) { return write(n.text); },
              [&](const node::Output& n) { return write(to_text(eval(*n.value))); },
              [&](const node::If& n) {
                for (const auto& [condition, body] : n.branches)
                  if (eval(*condition).truthy()) return exec(body);
                return exec(n.otherwise);
              },
              [&](const node::For& n) { return exec_for(n); },
              [&](const node::Set& n) {
                bind(n.target, eval(*n.value));
                return Flow::kNormal;
              },
              [&](const node::SetAttribute& n) { return exec_set_attribute(n); },
              [&](const node::SetBlock& n) {
                std::string captured;
                std::string* const outer = out_;
                out_ = &captured;
                const Flow flow = exec(n.body);
                out_ = outer;
                scopes_.back()[n.name] = Value::string(std::move(captured));
                return flow;
              },
              [&](const node::Break&) { return Flow::kBreak; },
              [&](const node::Continue&) { return Flow::kContinue; },
              [&](const std::shared_ptr<const node::Macro>& n) {
                macros_[n->name] = n.get();
                return Flow::kNormal;
              },
          },
          stmt.node);
    });
  }

  Flow write(std::string_view text) {
    append_bounded(*out_, text);
    return Flow::kNormal;
  }

  Flow exec_for(const node::For& n) {
    std::vector<Value> items = iterate(eval(*n.iterable));
    if (n.filter) {  // `for x in xs if cond`: filtered first, so loop.length counts what is left
      std::vector<Value> kept;
      for (Value& item : items) {
        count_step();
        scopes_.emplace_back();
        bind(n.target, item);
        const bool keep = eval(*n.filter).truthy();
        scopes_.pop_back();
        if (keep) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) return exec(n.otherwise);
    auto state = std::make_shared<LoopState>(LoopState{std::make_shared<const std::vector<Value>>(std::move(items))});
    const Value loop = Value::loop(state);
    for (const Value& item : *state->items) {
      count_step();
      scopes_.emplace_back();
      bind(n.target, item);
      scopes_.back()["loop"] = loop;
      const Flow flow = exec(n.body);
      scopes_.pop_back();
      if (flow == Flow::kBreak) break;
      ++state->index0;
    }
    return Flow::kNormal;
  }

  Flow exec_set_attribute(const node::SetAttribute& n) {
    const Value object = lookup(n.object);
    if (object.kind() != Value::Kind::kNamespace)
      throw TemplateError("cannot assign attribute on non-namespace object '" + n.object + "'");
    Value value = eval(*n.value);
    if (value.holds_namespace()) throw TemplateError("a namespace cannot hold a namespace or loop");
    object.as_namespace().set(n.attribute, std::move(value));
    return Flow::kNormal;
  }

  // ---- expressions ----
  Value eval(const Expr& e) {
    return located(e.offset, [&] {
      Value v = std::visit([&](const auto& n) { return eval_node(n); }, e.node);
      count_value(v);
      return v;
    });
  }

  CallArgs eval_arguments(const Arguments& arguments) {
    CallArgs args;
    for (const auto& e : arguments.positional) args.positional.push_back(eval(*e));
    for (const auto& [name, e] : arguments.keyword) args.keyword.emplace_back(name, eval(*e));
    return args;
  }

  Value eval_node(const node::Literal& n) { return n.value; }
  Value eval_node(const node::Variable& n) { return lookup(n.name); }

  Value eval_node(const node::ListLiteral& n) {
    std::vector<Value> items;
    for (const auto& e : n.items) items.push_back(eval(*e));
    return Value::list(std::move(items), n.is_tuple);
  }

  Value eval_node(const node::DictLiteral& n) {
    Dict::Entries entries;
    for (const auto& [key_expr, value_expr] : n.entries) {
      Value key = eval(*key_expr);
      if (!key.is_string()) throw TemplateError("dict keys must be strings, not '" + std::string(key.type_name()) + "'");
      entries.emplace_back(key.as_string(), eval(*value_expr));
    }
    return Value::dict(std::move(entries));
  }

  Value eval_node(const node::Attribute& n) { return get_attribute(eval(*n.object), n.name); }
  Value eval_node(const node::Subscript& n) { return get_item(eval(*n.object), eval(*n.index)); }

  std::optional<int64_t> slice_bound(const ExprPtr& e) {
    if (!e) return std::nullopt;
    const Value v = eval(*e);
    if (v.is_none()) return std::nullopt;
    if (v.kind() != Value::Kind::kInt && v.kind() != Value::Kind::kBool)
      throw TemplateError("slice indices must be integers or None, not '" + std::string(v.type_name()) + "'");
    return v.as_integral();
  }

  Value eval_node(const node::Slice& n) {
    const Value object = eval(*n.object);
    const auto start = slice_bound(n.start), stop = slice_bound(n.stop), step = slice_bound(n.step);
    if (object.is_undefined()) throw TemplateError(object.as_undefined().description);
    if (object.is_string()) {
      const std::u32string cps = to_code_points(object.as_string());
      std::u32string picked;
      for (size_t i : slice_indices(cps.size(), start, stop, step)) picked += cps[i];
      return Value::string(from_code_points(picked));
    }
    if (object.kind() != Value::Kind::kList)
      return Value::undefined(std::string("'").append(object.type_name()).append("' object is not subscriptable"));
    const List& list = object.as_list();
    std::vector<Value> picked;
    for (size_t i : slice_indices(list.items.size(), start, stop, step)) picked.push_back(list.items[i]);
    return Value::list(std::move(picked), list.is_tuple);
  }

  // A macro's body renders in a scope of its own over the template's variables (not the
  // caller's locals, as in Jinja): its parameters from the arguments, else their defaults.
  Value call_macro(const node::Macro& macro, const CallArgs& args) {
    if (args.positional.size() > macro.parameters.size())
      throw TemplateError("macro '" + macro.name + "' takes not more than " + std::to_string(macro.parameters.size()) +
                          " argument(s)");
    if (macro_depth_ >= kMaxMacroDepth)
      throw TemplateError("macros call each other deeper than the limit of " + std::to_string(kMaxMacroDepth));
    Scope parameters;
    for (const auto& [name, value] : args.keyword) {
      if (std::find(macro.parameters.begin(), macro.parameters.end(), name) == macro.parameters.end())
        throw TemplateError("macro '" + macro.name + "' takes no keyword argument '" + name + "'");
      parameters[name] = value;
    }
    std::vector<Scope> caller = std::move(scopes_);
    scopes_ = {caller.front(), Scope{}};
    for (size_t i = 0; i < macro.parameters.size(); ++i) {
      const std::string& name = macro.parameters[i];
      if (i < args.positional.size()) {
        scopes_.back()[name] = args.positional[i];
      } else if (const auto it = parameters.find(name); it != parameters.end()) {
        scopes_.back()[name] = it->second;
      } else {
        scopes_.back()[name] = macro.defaults[i] ? eval(*macro.defaults[i])
                                                 : Value::undefined("'" + name + "' is undefined");
      }
    }
    std::string text;
    std::string* const outer = out_;
    out_ = &text;
    ++macro_depth_;
    try {
      exec(macro.body);
    } catch (...) {
      --macro_depth_, out_ = outer, scopes_ = std::move(caller);
      throw;
    }
    --macro_depth_, out_ = outer, scopes_ = std::move(caller);
    return Value::string(std::move(text));
  }

  Value eval_node(const node::Call& n) {
    if (const auto* name = std::get_if<node::Variable>(&n.callee->node))
      if (const auto it = macros_.find(name->name); it != macros_.end())
        return call_macro(*it->second, eval_arguments(n.arguments));
    const Value callee = eval(*n.callee);
    const CallArgs args = eval_arguments(n.arguments);
    switch (callee.kind()) {
      case Value::Kind::kMethod: return call_method(callee.as_method(), args);
      case Value::Kind::kFunction: return call_global_function(callee.as_function().name, args, fixed_now_);
      case Value::Kind::kUndefined: throw TemplateError(callee.as_undefined().description);
      default: throw TemplateError("'" + std::string(callee.type_name()) + "' object is not callable");
    }
  }

  Value eval_node(const node::Filter& n) {
    const Value operand = eval(*n.operand);
    return apply_filter(n.name, operand, eval_arguments(n.arguments));
  }

  Value eval_node(const node::Test& n) {
    const Value operand = eval(*n.operand);
    return Value::boolean(apply_test(n.name, operand, eval_arguments(n.arguments)) != n.negated);
  }

  Value eval_node(const node::Unary& n) {
    const Value operand = eval(*n.operand);
    if (n.op == node::UnaryOp::kNot) return Value::boolean(!operand.truthy());
    return apply_unary(n.op, operand);
  }

  Value eval_node(const node::Binary& n) {
    Value left = eval(*n.left);
    if (n.op == node::BinaryOp::kAnd) return left.truthy() ? eval(*n.right) : left;
    if (n.op == node::BinaryOp::kOr) return left.truthy() ? left : eval(*n.right);
    return apply_binary(n.op, left, eval(*n.right));
  }

  Value eval_node(const node::Compare& n) {
    Value left = eval(*n.first);
    for (const auto& [op, e] : n.rest) {
      Value right = eval(*e);
      if (!apply_compare(op, left, right)) return Value::boolean(false);
      left = std::move(right);
    }
    return Value::boolean(true);
  }

  Value eval_node(const node::Conditional& n) {
    if (eval(*n.condition).truthy()) return eval(*n.then);
    if (n.otherwise) return eval(*n.otherwise);
    return Value::undefined("the inline if-expression evaluated to false and has no else");
  }

  std::string_view source_;
  const std::optional<std::tm>& fixed_now_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, const node::Macro*> macros_;  // defined so far (the tree outlives the render)
  int macro_depth_ = 0;
  std::string* out_ = nullptr;  // the output, or the text a {% set %} block captures
  uint64_t steps_ = 0;
  uint64_t string_work_ = 0;
};

}  // namespace

std::string render(const Body& body, std::string_view source, const Dict::Entries& variables,
                   const std::optional<std::tm>& fixed_now) {
  return Renderer(source, fixed_now).run(body, variables);
}

}  // namespace nanoserve::templates::jinja
