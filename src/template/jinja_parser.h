// Tokens → syntax tree, following Jinja's grammar and operator precedence (lowest first):
// `x if c else y`, or, and, not, comparisons (== != < <= > >= in, not in; chained),
// + -, ~, * / // %, **, unary - +, then postfix .name [i] [a:b:c] (args) and the
// filter/test chain | f(args), is [not] t(args).
// Statements: if/elif/else, for (with `if` filter, else, break, continue), set (name,
// unpacking, namespace attribute, block), and generation (rendered as its body).
#pragma once

#include <string_view>

#include "template/jinja_ast.h"

namespace nanoserve::templates::jinja {

// Parses a normalized source (normalize_source). Throws TemplateError "line L:C: ..." that
// says what was expected, for unknown tags, filters and tests too.
Body parse_template(std::string_view source);

}  // namespace nanoserve::templates::jinja
