#include "gguf/value.h"

#include <limits>
#include <stdexcept>

namespace nanoserve::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
  }
  return "unknown";
}

Value Value::strings(const std::vector<std::string>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (const auto& s : v) items.push_back(string(s));
  return array(ValueType::STRING, std::move(items));
}

Value Value::i32s(const std::vector<int32_t>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (int32_t x : v) items.push_back(i32(x));
  return array(ValueType::INT32, std::move(items));
}

Value Value::f32s(const std::vector<float>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (float x : v) items.push_back(f32(x));
  return array(ValueType::FLOAT32, std::move(items));
}

bool Value::is_integer() const {
  return std::holds_alternative<uint64_t>(data_) || std::holds_alternative<int64_t>(data_);
}

static std::runtime_error type_error(ValueType have, const char* want) {
  return std::runtime_error(std::string("metadata value is ") + std::string(value_type_name(have)) +
                            ", expected " + want);
}

uint64_t Value::as_u64() const {
  if (const auto* u = std::get_if<uint64_t>(&data_)) return *u;
  if (const auto* i = std::get_if<int64_t>(&data_)) {
    if (*i < 0) throw std::runtime_error("metadata value is negative, expected an unsigned integer");
    return static_cast<uint64_t>(*i);
  }
  throw type_error(type_, "an integer");
}

int64_t Value::as_i64() const {
  if (const auto* i = std::get_if<int64_t>(&data_)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&data_)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw std::runtime_error("metadata value does not fit int64");
    return static_cast<int64_t>(*u);
  }
  throw type_error(type_, "an integer");
}

double Value::as_f64() const {
  if (const auto* d = std::get_if<double>(&data_)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&data_)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&data_)) return static_cast<double>(*i);
  throw type_error(type_, "a number");
}

bool Value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&data_)) return *b;
  throw type_error(type_, "bool");
}

const std::string& Value::as_string() const {
  if (const auto* s = std::get_if<std::string>(&data_)) return *s;
  throw type_error(type_, "string");
}

const Value::Array& Value::as_array() const {
  if (const auto* a = std::get_if<Array>(&data_)) return *a;
  throw type_error(type_, "array");
}

}  // namespace nanoserve::gguf
