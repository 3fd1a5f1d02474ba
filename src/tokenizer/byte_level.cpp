#include "tokenizer/byte_level.h"

#include <array>

#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

constexpr bool stands_for_itself(unsigned byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

constexpr std::array<char32_t, 256> make_stand_ins() {
  std::array<char32_t, 256> stand_ins{};
  char32_t next_shifted = 0x100;
  for (unsigned byte = 0; byte < 256; ++byte) stand_ins[byte] = stands_for_itself(byte) ? byte : next_shifted++;
  return stand_ins;
}
constexpr std::array<char32_t, 256> kStandIns = make_stand_ins();

// Every stand-in is below U+0144; this maps them back (-1: not a stand-in).
constexpr char32_t kStandInLimit = 0x144;
constexpr std::array<int16_t, kStandInLimit> make_bytes_of_stand_ins() {
  std::array<int16_t, kStandInLimit> bytes{};
  for (auto& b : bytes) b = -1;
  for (unsigned byte = 0; byte < 256; ++byte) bytes[kStandIns[byte]] = static_cast<int16_t>(byte);
  return bytes;
}
constexpr std::array<int16_t, kStandInLimit> kBytesOfStandIns = make_bytes_of_stand_ins();

}  // namespace

char32_t byte_to_stand_in(uint8_t byte) { return kStandIns[byte]; }

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) utf8::append(out, kStandIns[static_cast<uint8_t>(c)]);
  return out;
}

std::optional<std::string> byte_level_decode(std::string_view stored) {
  std::string bytes;
  bytes.reserve(stored.size());
  for (size_t pos = 0; pos < stored.size();) {
    const utf8::Char c = utf8::decode(stored, pos);
    if (c.status != utf8::Status::kValid || c.code_point >= kStandInLimit || kBytesOfStandIns[c.code_point] < 0)
      return std::nullopt;
    bytes += static_cast<char>(kBytesOfStandIns[c.code_point]);
    pos += c.length;
  }
  return bytes;
}

}  // namespace nanoserve::tokenizer
