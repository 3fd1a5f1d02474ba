// GPT-2's byte-level alphabet: every byte has a printable stand-in code point, so a
// vocabulary of byte strings can be stored as text. Bytes 0x21..0x7E, 0xA1..0xAC and
// 0xAE..0xFF stand for themselves; the other 68 bytes map, in increasing order, to
// U+0100, U+0101, ... (so a space, 0x20, is written U+0120 'Ġ' and a newline 'Ċ').
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nanoserve::tokenizer {

char32_t byte_to_stand_in(uint8_t byte);

// The stored (printable) form of raw bytes.
std::string byte_level_encode(std::string_view bytes);

// The raw bytes of a stored form; nullopt when a character is not one of the 256 stand-ins.
std::optional<std::string> byte_level_decode(std::string_view stored);

}  // namespace nanoserve::tokenizer
