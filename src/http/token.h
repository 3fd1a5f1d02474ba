// The character classes of HTTP's grammar (RFC 9110 §5.6) and small string helpers.
#pragma once

#include <string>
#include <string_view>

namespace nanoserve::http {

// tchar: what a method or a header name is made of.
bool is_token_char(unsigned char c);
// What a header value may hold: visible characters, space, tab and obs-text (bytes >= 0x80).
bool is_field_value_char(unsigned char c);
bool is_token(std::string_view s);

std::string_view trim_whitespace(std::string_view s);  // spaces and tabs at both ends
bool equals_ignoring_case(std::string_view a, std::string_view b);
std::string lower_case(std::string_view s);

}  // namespace nanoserve::http
