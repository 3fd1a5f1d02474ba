// A GGUF metadata value: a scalar, a string, or an array of values (arrays may nest).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nanoserve::gguf {

// On-disk ids of gguf_type.
enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
std::string_view value_type_name(ValueType t);

class Value {
 public:
  struct Array {
    ValueType elem_type;
    std::vector<Value> items;
    bool operator==(const Array&) const = default;
  };

  Value() : type_(ValueType::UINT8), data_(uint64_t{0}) {}
  static Value u8(uint8_t v) { return Value(ValueType::UINT8, uint64_t{v}); }
  static Value i8(int8_t v) { return Value(ValueType::INT8, int64_t{v}); }
  static Value u16(uint16_t v) { return Value(ValueType::UINT16, uint64_t{v}); }
  static Value i16(int16_t v) { return Value(ValueType::INT16, int64_t{v}); }
  static Value u32(uint32_t v) { return Value(ValueType::UINT32, uint64_t{v}); }
  static Value i32(int32_t v) { return Value(ValueType::INT32, int64_t{v}); }
  static Value u64(uint64_t v) { return Value(ValueType::UINT64, v); }
  static Value i64(int64_t v) { return Value(ValueType::INT64, v); }
  static Value f32(float v) { return Value(ValueType::FLOAT32, double{v}); }
  static Value f64(double v) { return Value(ValueType::FLOAT64, v); }
  static Value boolean(bool v) { return Value(ValueType::BOOL, v); }
  static Value string(std::string v) { return Value(ValueType::STRING, std::move(v)); }
  static Value array(ValueType elem_type, std::vector<Value> items) {
    return Value(ValueType::ARRAY, Array{elem_type, std::move(items)});
  }
  static Value strings(const std::vector<std::string>& v);
  static Value i32s(const std::vector<int32_t>& v);
  static Value f32s(const std::vector<float>& v);

  ValueType type() const { return type_; }
  bool is_integer() const;
  bool is_float() const { return type_ == ValueType::FLOAT32 || type_ == ValueType::FLOAT64; }

  // Checked accessors: throw std::runtime_error when the value is not of a fitting type
  // or does not fit the requested integer range.
  uint64_t as_u64() const;
  int64_t as_i64() const;
  double as_f64() const;  // integers convert too
  bool as_bool() const;
  const std::string& as_string() const;
  const Array& as_array() const;

  bool operator==(const Value&) const = default;

 private:
  using Data = std::variant<uint64_t, int64_t, double, bool, std::string, Array>;
  Value(ValueType t, Data d) : type_(t), data_(std::move(d)) {}
  ValueType type_;
  Data data_;
};

}  // namespace nanoserve::gguf
