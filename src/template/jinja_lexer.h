// Template source → tokens, with Jinja's whitespace handling applied to the text between
// tags, configured as Hugging Face's apply_chat_template configures Jinja:
//   trim_blocks=True     the first newline after a block tag (%}) or comment (#}) is dropped
//   lstrip_blocks=True   spaces and tabs from the start of a line up to a block tag or
//                        comment are dropped (not before {{ ... }})
//   {%- {{- {#-          strip all whitespace before the tag; -%} -}} -#} after it
//   {%+ and +%}          turn lstrip_blocks and trim_blocks off for that tag
//   keep_trailing_newline=False: one newline at the very end of the source is dropped.
// Comments produce no tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::templates::jinja {

enum class TokenKind {
  kText,            // literal output
  kExpressionOpen,  // {{
  kExpressionClose, // }}
  kStatementOpen,   // {%
  kStatementClose,  // %}
  kName,
  kString,          // text holds the decoded value
  kInteger,
  kFloat,
  kOperator,        // text holds the operator: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string text;
  size_t offset;  // where it starts in the normalized source
  int64_t integer = 0;
  double number = 0;
};

// The source as Jinja reads it: \r\n and \r become \n; one final newline is dropped.
std::string normalize_source(std::string_view source);

// Tokens of a normalized source, ending with kEnd. Throws TemplateError ("line L:C: ...")
// for an unclosed tag, comment or string, a bad escape or number, or a stray character.
std::vector<Token> tokenize(std::string_view source);

// "line L:C: " for a byte offset of the source (columns count code points from 1).
std::string location_prefix(std::string_view source, size_t offset);

}  // namespace nanoserve::templates::jinja
