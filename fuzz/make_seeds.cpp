// Writes a few small, valid GGUF files to seed the fuzzer's corpus.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gguf/writer.h"

using namespace nanoserve::gguf;

static void write_seed(const std::string& path, uint32_t alignment, const std::vector<TensorType>& types) {
  std::ofstream out(path, std::ios::binary);
  Writer w(out, alignment);
  w.set("general.architecture", Value::string("qwen3"));
  w.set("qwen3.block_count", Value::u32(1));
  w.set("qwen3.rope.freq_base", Value::f32(1e6f));
  w.set("tokenizer.ggml.tokens", Value::strings({"a", "b", "ab", "<|im_end|>"}));
  w.set("tokenizer.ggml.merges", Value::strings({"a b"}));
  w.set("tokenizer.ggml.token_type", Value::i32s({1, 1, 1, 3}));
  w.set("tokenizer.ggml.add_bos_token", Value::boolean(false));
  w.set("t.nested", Value::array(ValueType::ARRAY, {Value::i32s({1, 2}), Value::strings({"x"})}));
  w.set("t.i64", Value::i64(-5));
  w.set("t.f64", Value::f64(0.25));
  std::vector<std::vector<uint8_t>> data;
  for (size_t i = 0; i < types.size(); ++i) {
    uint64_t row = type_info(types[i]).block_elems * 2;
    w.add_tensor("t" + std::to_string(i) + ".weight", types[i], {row, 2});
    data.emplace_back(*row_bytes(types[i], row) * 2, static_cast<uint8_t>(i + 1));
  }
  w.write_header();
  for (const auto& d : data) w.write_data(d);
  w.finish();
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  write_seed(dir + "/seed_f32.gguf", 32, {TensorType::F32, TensorType::F16});
  write_seed(dir + "/seed_quant.gguf", 32, {TensorType::Q8_0, TensorType::Q4_K, TensorType::BF16});
  write_seed(dir + "/seed_align64.gguf", 64, {TensorType::Q6_K});
  write_seed(dir + "/seed_empty.gguf", 32, {});
  return 0;
}
