// libFuzzer target for the GGUF reader: any byte string must either parse into a File
// whose every tensor lies inside the input, or throw gguf::FormatError. Anything else
// (a crash, a sanitizer report, another exception type, a huge allocation) is a bug.
#include <cstddef>
#include <cstdint>

#include "gguf/file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nanoserve::gguf;
  try {
    File f = File::parse({data, size});
    volatile uint8_t sink = 0;
    for (const auto& t : f.tensors()) {
      if (t.n_bytes == 0) continue;
      // Touch the first and last byte: ASan flags any tensor that reaches outside the input.
      sink = sink ^ t.data[0] ^ t.data[t.n_bytes - 1];
    }
    for (const auto& [key, value] : f.metadata().entries()) {
      if (value.type() == ValueType::ARRAY) (void)value.as_array().items.size();
      (void)f.metadata().find(key);
    }
  } catch (const FormatError&) {
  }
  return 0;
}
