#include "template/jinja_parser.h"

#include <algorithm>
#include <utility>
#include <initializer_list>
#include <optional>
#include <type_traits>

#include "template/jinja_builtins.h"
#include "template/jinja_lexer.h"

namespace nanoserve::templates::jinja {
namespace {

using node::BinaryOp;
using node::CompareOp;

int deepest_child(const decltype(Expr::node)& n) {
  int deepest = 0;
  auto take = [&](const ExprPtr& e) {
    if (e) deepest = std::max(deepest, e->depth);
  };
  auto take_arguments = [&](const Arguments& a) {
    for (const auto& e : a.positional) take(e);
    for (const auto& [name, e] : a.keyword) take(e);
  };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, node::ListLiteral>) {
          for (const auto& e : x.items) take(e);
        } else if constexpr (std::is_same_v<T, node::DictLiteral>) {
          for (const auto& [k, v] : x.entries) take(k), take(v);
        } else if constexpr (std::is_same_v<T, node::Attribute>) {
          take(x.object);
        } else if constexpr (std::is_same_v<T, node::Subscript>) {
          take(x.object), take(x.index);
        } else if constexpr (std::is_same_v<T, node::Slice>) {
          take(x.object), take(x.start), take(x.stop), take(x.step);
        } else if constexpr (std::is_same_v<T, node::Call>) {
          take(x.callee), take_arguments(x.arguments);
        } else if constexpr (std::is_same_v<T, node::Filter> || std::is_same_v<T, node::Test>) {
          take(x.operand), take_arguments(x.arguments);
        } else if constexpr (std::is_same_v<T, node::Unary>) {
          take(x.operand);
        } else if constexpr (std::is_same_v<T, node::Binary>) {
          take(x.left), take(x.right);
        } else if constexpr (std::is_same_v<T, node::Compare>) {
          take(x.first);
          for (const auto& [op, e] : x.rest) take(e);
        } else if constexpr (std::is_same_v<T, node::Conditional>) {
          take(x.condition), take(x.then), take(x.otherwise);
        }
      },
      n);
  return deepest;
}

class Parser {
 public:
  Parser(std::string_view source) : src_(source), tokens_(tokenize(source)) {}

  Body parse() { return parse_body({}); }

 private:
  // Counts the parser's own recursion (parentheses, unary chains, nested blocks).
  class DepthGuard {
   public:
    DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxSyntaxNesting) p_.fail("template nests deeper than the limit of " +
                                                    std::to_string(kMaxSyntaxNesting));
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // ---- tokens ----
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(at_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[at_];
    if (at_ + 1 < tokens_.size()) ++at_;
    return t;
  }
  bool at_operator(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kOperator && peek(ahead).text == op;
  }
  bool at_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kName && peek(ahead).text == name;
  }
  bool skip_operator(std::string_view op) {
    if (!at_operator(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!at_name(name)) return false;
    next();
    return true;
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kText: return "text";
      case TokenKind::kExpressionOpen: return "'{{'";
      case TokenKind::kExpressionClose: return "'}}'";
      case TokenKind::kStatementOpen: return "'{%'";
      case TokenKind::kStatementClose: return "'%}'";
      case TokenKind::kString: return "a string";
      case TokenKind::kEnd: return "the end of the template";
      default: return "'" + t.text + "'";
    }
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(peek().offset, message); }
  [[noreturn]] void fail_at(size_t offset, const std::string& message) const {
    throw TemplateError(location_prefix(src_, offset) + message);
  }
  [[noreturn]] void expected(const std::string& what) const { fail("expected " + what + ", found " + describe(peek())); }

  void expect_operator(std::string_view op) {
    if (!skip_operator(op)) expected("'" + std::string(op) + "'");
  }
  std::string expect_name(const std::string& what) {
    if (peek().kind != TokenKind::kName) expected(what);
    return next().text;
  }
  void expect_kind(TokenKind kind, const std::string& what) {
    if (peek().kind != kind) expected(what);
    next();
  }
  void expect_statement_end() { expect_kind(TokenKind::kStatementClose, "'%}'"); }

  ExprPtr make(size_t offset, decltype(Expr::node) n) {
    const int depth = deepest_child(n) + 1;
    if (depth > kMaxSyntaxNesting)
      throw TemplateError(location_prefix(src_, offset) + "expression nests deeper than the limit of " +
                          std::to_string(kMaxSyntaxNesting));
    return std::make_unique<Expr>(Expr{offset, depth, std::move(n)});
  }

  // ---- statements ----

  // Statements up to a tag named in `end_tags` (left unread, just after its '{%'), or up to
  // the end of the template when `end_tags` is empty.
  Body parse_body(std::initializer_list<std::string_view> end_tags) {
    Body body;
    for (;;) {
      const Token& t = peek();
      switch (t.kind) {
        case TokenKind::kEnd:
          if (end_tags.size() == 0) return body;
          fail("unexpected end of template, expected " + quoted_list(end_tags));
        case TokenKind::kText:
          body.push_back({t.offset, node::Text{t.text}});
          next();
          break;
        case TokenKind::kExpressionOpen: {
          const size_t offset = next().offset;
          ExprPtr value = parse_expression();
          expect_kind(TokenKind::kExpressionClose, "'}}'");
          body.push_back({offset, node::Output{std::move(value)}});
          break;
        }
        case TokenKind::kStatementOpen: {
          if (peek(1).kind == TokenKind::kName &&
              std::find(end_tags.begin(), end_tags.end(), peek(1).text) != end_tags.end()) {
            next();
            return body;
          }
          next();
          parse_statement(body, end_tags);
          break;
        }
        default: expected("text, '{{' or '{%'");
      }
    }
  }

  static std::string quoted_list(std::initializer_list<std::string_view> names) {
    std::string list;
    for (std::string_view name : names) list.append(list.empty() ? "'" : " or '").append(name).append("'");
    return list;
  }

  void parse_statement(Body& body, std::initializer_list<std::string_view> end_tags) {
    const size_t offset = peek().offset;
    const std::string tag = expect_name("a statement name");
    DepthGuard guard(*this);
    if (tag == "if") return body.push_back({offset, parse_if()});
    if (tag == "for") return body.push_back({offset, parse_for()});
    if (tag == "set") return body.push_back({offset, parse_set()});
    if (tag == "macro") return body.push_back({offset, parse_macro()});
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail_at(offset, "'" + tag + "' outside of a loop");
      expect_statement_end();
      if (tag == "break") return body.push_back({offset, node::Break{}});
      return body.push_back({offset, node::Continue{}});
    }
    if (tag == "generation") {  // Hugging Face's marker of assistant text: renders as its body
      expect_statement_end();
      Body inner = parse_body({"endgeneration"});
      next();
      expect_statement_end();
      for (Stmt& s : inner) body.push_back(std::move(s));
      return;
    }
    if (end_tags.size() > 0) fail_at(offset, "unexpected tag '" + tag + "', expected " + quoted_list(end_tags));
    fail_at(offset, "unknown tag '" + tag + "'");
  }

  node::If parse_if() {
    node::If n;
    ExprPtr condition = parse_expression();
    expect_statement_end();
    n.branches.emplace_back(std::move(condition), parse_body({"elif", "else", "endif"}));
    for (;;) {
      const std::string tag = next().text;
      if (tag == "elif") {
        condition = parse_expression();
        expect_statement_end();
        n.branches.emplace_back(std::move(condition), parse_body({"elif", "else", "endif"}));
      } else if (tag == "else") {
        expect_statement_end();
        n.otherwise = parse_body({"endif"});
        next();
        expect_statement_end();
        return n;
      } else {
        expect_statement_end();
        return n;
      }
    }
  }

  node::Target parse_target() {
    node::Target target;
    target.names.push_back(expect_name("a variable name"));
    while (skip_operator(",")) {
      target.unpack = true;
      if (peek().kind != TokenKind::kName) break;  // a trailing comma
      target.names.push_back(next().text);
    }
    return target;
  }

  node::For parse_for() {
    node::For n;
    n.target = parse_target();
    if (!skip_name("in")) expected("'in'");
    n.iterable = parse_expression(/*allow_conditional=*/false);
    if (skip_name("if")) n.filter = parse_expression();
    if (at_name("recursive")) fail("recursive loops are not supported");
    expect_statement_end();
    ++loop_depth_;
    n.body = parse_body({"else", "endfor"});
    --loop_depth_;
    if (next().text == "else") {
      expect_statement_end();
      n.otherwise = parse_body({"endfor"});
      next();
    }
    expect_statement_end();
    return n;
  }

  std::shared_ptr<const node::Macro> parse_macro() {
    auto n = std::make_shared<node::Macro>();
    n->name = expect_name("a macro name");
    expect_operator("(");
    while (!skip_operator(")")) {
      if (!n->parameters.empty()) expect_operator(",");
      if (skip_operator(")")) break;  // a trailing comma
      n->parameters.push_back(expect_name("a parameter name"));
      n->defaults.push_back(skip_operator("=") ? parse_expression() : nullptr);
    }
    expect_statement_end();
    const int loops = std::exchange(loop_depth_, 0);  // a loop around the definition is not the body's
    n->body = parse_body({"endmacro"});
    loop_depth_ = loops;
    next();
    expect_statement_end();
    return n;
  }

  decltype(Stmt::node) parse_set() {
    if (peek().kind == TokenKind::kName && at_operator(".", 1) && peek(2).kind == TokenKind::kName &&
        at_operator("=", 3)) {
      node::SetAttribute n;
      n.object = next().text;
      next();
      n.attribute = next().text;
      next();
      n.value = parse_tuple_or_expression();
      expect_statement_end();
      return n;
    }
    node::Target target = parse_target();
    if (skip_operator("=")) {
      node::Set n{std::move(target), parse_tuple_or_expression()};
      expect_statement_end();
      return n;
    }
    if (target.unpack || peek().kind != TokenKind::kStatementClose) expected("'='");
    next();
    node::SetBlock n{target.names[0], parse_body({"endset"})};
    next();
    expect_statement_end();
    return n;
  }

  // `a, b` without parentheses is a tuple where Jinja allows it (the value of a set).
  ExprPtr parse_tuple_or_expression() {
    const size_t offset = peek().offset;
    ExprPtr first = parse_expression();
    if (!at_operator(",")) return first;
    node::ListLiteral tuple{{}, true};
    tuple.items.push_back(std::move(first));
    while (skip_operator(",")) {
      if (peek().kind == TokenKind::kStatementClose) break;
      tuple.items.push_back(parse_expression());
    }
    return make(offset, std::move(tuple));
  }

  // ---- expressions, lowest precedence first ----

  ExprPtr parse_expression(bool allow_conditional = true) {
    DepthGuard guard(*this);
    const size_t offset = peek().offset;
    ExprPtr e = parse_or();
    while (allow_conditional && skip_name("if")) {
      ExprPtr condition = parse_or();
      ExprPtr otherwise = skip_name("else") ? parse_expression() : nullptr;
      e = make(offset, node::Conditional{std::move(condition), std::move(e), std::move(otherwise)});
    }
    return e;
  }

  ExprPtr parse_or() {
    const size_t offset = peek().offset;
    ExprPtr e = parse_and();
    while (skip_name("or")) e = make(offset, node::Binary{BinaryOp::kOr, std::move(e), parse_and()});
    return e;
  }

  ExprPtr parse_and() {
    const size_t offset = peek().offset;
    ExprPtr e = parse_not();
    while (skip_name("and")) e = make(offset, node::Binary{BinaryOp::kAnd, std::move(e), parse_not()});
    return e;
  }

  ExprPtr parse_not() {
    const size_t offset = peek().offset;
    if (skip_name("not")) {
      DepthGuard guard(*this);
      return make(offset, node::Unary{node::UnaryOp::kNot, parse_not()});
    }
    return parse_compare();
  }

  std::optional<CompareOp> compare_operator() {
    static const std::pair<std::string_view, CompareOp> kSymbols[] = {
        {"==", CompareOp::kEqual}, {"!=", CompareOp::kNotEqual},    {"<", CompareOp::kLess},
        {"<=", CompareOp::kLessEqual}, {">", CompareOp::kGreater}, {">=", CompareOp::kGreaterEqual}};
    for (const auto& [symbol, op] : kSymbols)
      if (skip_operator(symbol)) return op;
    if (skip_name("in")) return CompareOp::kIn;
    if (at_name("not") && at_name("in", 1)) {
      next(), next();
      return CompareOp::kNotIn;
    }
    return std::nullopt;
  }

  ExprPtr parse_compare() {
    const size_t offset = peek().offset;
    ExprPtr first = parse_additive();
    node::Compare n{std::move(first), {}};
    while (auto op = compare_operator()) n.rest.emplace_back(*op, parse_additive());
    if (n.rest.empty()) return std::move(n.first);
    return make(offset, std::move(n));
  }

  // One left-associative level of binary operators.
  template <typename Next>
  ExprPtr parse_binary_level(std::initializer_list<std::pair<std::string_view, BinaryOp>> ops, Next parse_next) {
    const size_t offset = peek().offset;
    ExprPtr e = (this->*parse_next)();
    for (bool matched = true; matched;) {
      matched = false;
      for (const auto& [symbol, op] : ops) {
        if (!skip_operator(symbol)) continue;
        e = make(offset, node::Binary{op, std::move(e), (this->*parse_next)()});
        matched = true;
        break;
      }
    }
    return e;
  }

  ExprPtr parse_additive() {
    return parse_binary_level({{"+", BinaryOp::kAdd}, {"-", BinaryOp::kSubtract}}, &Parser::parse_concat);
  }
  ExprPtr parse_concat() { return parse_binary_level({{"~", BinaryOp::kConcat}}, &Parser::parse_multiplicative); }
  ExprPtr parse_multiplicative() {
    return parse_binary_level({{"*", BinaryOp::kMultiply}, {"/", BinaryOp::kDivide},
                               {"//", BinaryOp::kFloorDivide}, {"%", BinaryOp::kModulo}},
                              &Parser::parse_power);
  }
  ExprPtr parse_power() { return parse_binary_level({{"**", BinaryOp::kPower}}, &Parser::parse_unary_with_filters); }

  ExprPtr parse_unary_with_filters() { return parse_unary(true); }

  // Jinja: a unary minus applies before the filters (-x|abs is abs(-x)).
  ExprPtr parse_unary(bool with_filters) {
    const size_t offset = peek().offset;
    ExprPtr e;
    if (at_operator("-") || at_operator("+")) {
      DepthGuard guard(*this);
      const auto op = next().text == "-" ? node::UnaryOp::kNegate : node::UnaryOp::kPlus;
      e = make(offset, node::Unary{op, parse_unary(false)});
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e), offset);
    return with_filters ? parse_filters_and_tests(std::move(e), offset) : std::move(e);
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    const size_t offset = t.offset;
    switch (t.kind) {
      case TokenKind::kName: {
        const std::string name = next().text;
        if (name == "true" || name == "True") return make(offset, node::Literal{Value::boolean(true)});
        if (name == "false" || name == "False") return make(offset, node::Literal{Value::boolean(false)});
        if (name == "none" || name == "None") return make(offset, node::Literal{Value::none()});
        return make(offset, node::Variable{name});
      }
      case TokenKind::kString: {
        std::string text;
        while (peek().kind == TokenKind::kString) text += next().text;  // adjacent literals join
        return make(offset, node::Literal{Value::string(std::move(text))});
      }
      case TokenKind::kInteger: return make(offset, node::Literal{Value::integer(next().integer)});
      case TokenKind::kFloat: return make(offset, node::Literal{Value::floating(next().number)});
      case TokenKind::kOperator:
        if (skip_operator("(")) return parse_parenthesized(offset);
        if (skip_operator("[")) return make(offset, node::ListLiteral{parse_items("]"), false});
        if (skip_operator("{")) return parse_dict(offset);
        break;
      default: break;
    }
    expected("an expression");
  }

  std::vector<ExprPtr> parse_items(std::string_view close) {
    std::vector<ExprPtr> items;
    while (!skip_operator(close)) {
      if (!items.empty()) expect_operator(",");
      if (skip_operator(close)) break;  // a trailing comma
      items.push_back(parse_expression());
    }
    return items;
  }

  ExprPtr parse_parenthesized(size_t offset) {
    if (skip_operator(")")) return make(offset, node::ListLiteral{{}, true});
    ExprPtr first = parse_expression();
    if (skip_operator(")")) return first;
    expect_operator(",");
    node::ListLiteral tuple{{}, true};
    tuple.items.push_back(std::move(first));
    for (auto& item : parse_items(")")) tuple.items.push_back(std::move(item));
    return make(offset, std::move(tuple));
  }

  ExprPtr parse_dict(size_t offset) {
    node::DictLiteral n;
    while (!skip_operator("}")) {
      if (!n.entries.empty()) expect_operator(",");
      if (skip_operator("}")) break;
      ExprPtr key = parse_expression();
      expect_operator(":");
      n.entries.emplace_back(std::move(key), parse_expression());
    }
    return make(offset, std::move(n));
  }

  ExprPtr parse_postfix(ExprPtr e, size_t offset) {
    for (;;) {
      if (skip_operator(".")) {
        if (peek().kind == TokenKind::kInteger) {  // x.0 is x[0]
          ExprPtr index = make(peek().offset, node::Literal{Value::integer(next().integer)});
          e = make(offset, node::Subscript{std::move(e), std::move(index)});
        } else {
          e = make(offset, node::Attribute{std::move(e), expect_name("an attribute name")});
        }
      } else if (skip_operator("[")) {
        e = parse_subscript(std::move(e), offset);
      } else if (at_operator("(")) {
        e = make(offset, node::Call{std::move(e), parse_arguments()});
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object, size_t offset) {
    ExprPtr start = at_operator(":") ? nullptr : parse_expression();
    if (start && skip_operator("]")) return make(offset, node::Subscript{std::move(object), std::move(start)});
    expect_operator(":");
    node::Slice n{std::move(object), std::move(start), nullptr, nullptr};
    if (!at_operator(":") && !at_operator("]")) n.stop = parse_expression();
    if (skip_operator(":") && !at_operator("]")) n.step = parse_expression();
    expect_operator("]");
    return make(offset, std::move(n));
  }

  Arguments parse_arguments() {
    expect_operator("(");
    Arguments args;
    while (!skip_operator(")")) {
      if (!args.positional.empty() || !args.keyword.empty()) expect_operator(",");
      if (skip_operator(")")) break;
      if (peek().kind == TokenKind::kName && at_operator("=", 1)) {
        std::string name = next().text;
        next();
        args.keyword.emplace_back(std::move(name), parse_expression());
      } else {
        if (!args.keyword.empty()) fail("positional argument follows keyword argument");
        args.positional.push_back(parse_expression());
      }
    }
    return args;
  }

  ExprPtr parse_filters_and_tests(ExprPtr e, size_t offset) {
    for (;;) {
      if (skip_operator("|")) {
        const size_t name_offset = peek().offset;
        const std::string name = expect_name("a filter name");
        if (!is_filter(name)) fail_at(name_offset, "no filter named '" + name + "'");
        Arguments args = at_operator("(") ? parse_arguments() : Arguments{};
        e = make(offset, node::Filter{std::move(e), name, std::move(args)});
      } else if (skip_name("is")) {
        e = parse_test(std::move(e), offset);
      } else if (at_operator("(")) {
        e = make(offset, node::Call{std::move(e), parse_arguments()});
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_test(ExprPtr operand, size_t offset) {
    const bool negated = skip_name("not");
    const size_t name_offset = peek().offset;
    const std::string name = expect_name("a test name");
    if (!is_test(name)) fail_at(name_offset, "no test named '" + name + "'");
    Arguments args;
    const TokenKind k = peek().kind;
    const bool argument_follows = k == TokenKind::kName || k == TokenKind::kString || k == TokenKind::kInteger ||
                                  k == TokenKind::kFloat || at_operator("[") || at_operator("{");
    if (at_operator("(")) {
      args = parse_arguments();
    } else if (argument_follows && !at_name("else") && !at_name("or") && !at_name("and")) {
      const size_t arg_offset = peek().offset;
      args.positional.push_back(parse_postfix(parse_primary(), arg_offset));  // `x is divisibleby 3`
    }
    return make(offset, node::Test{std::move(operand), name, std::move(args), negated});
  }

  std::string_view src_;
  std::vector<Token> tokens_;
  size_t at_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source) { return Parser(source).parse(); }

}  // namespace nanoserve::templates::jinja
