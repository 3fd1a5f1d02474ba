// Runs a parsed template. Scoping follows Jinja: each iteration of a for loop has its own
// scope (a `set` inside a loop is gone after it, which is why templates use namespaces),
// `if` blocks have none. Operators follow Python (and/or return an operand, / is true
// division, // and % floor, `~` joins as text).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "template/jinja_ast.h"

namespace nanoserve::templates::jinja {

// Renders `body`, parsed from `source` (for error locations), with `variables` as its
// globals; strftime_now formats `fixed_now` when set. Throws TemplateError: with "line L:C: "
// first for an error in the template, or the message alone for raise_exception.
std::string render(const Body& body, std::string_view source, const Dict::Entries& variables,
                   const std::optional<std::tm>& fixed_now);

}  // namespace nanoserve::templates::jinja
