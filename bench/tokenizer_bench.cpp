// Single-threaded encode throughput of our tokenizer on a corpus file (a plain program, not a
// Google Benchmark one, so that it measures exactly what bench/tokenizer_hf.mjs measures
// for Hugging Face's tokenizers; scripts/bench-tokenizer.sh runs both).
//
// Usage: tokenizer_bench TOKENIZER_JSON CORPUS [CHUNK_BYTES=65536] [RUNS=5]
// The corpus is cut into chunks at the first '\n' at or after every CHUNK_BYTES bytes; each
// chunk is one encode() call (special tokens parsed, no BOS/EOS). Prints one JSON line:
// bytes, chunks, tokens, an FNV-1a hash of all ids (to compare with the Hugging Face run),
// the best of RUNS timed passes, and MB/s (10^6 bytes per second) of that pass.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<std::string> cut_into_chunks(const std::string& corpus, size_t chunk_bytes) {
  std::vector<std::string> chunks;
  size_t begin = 0;
  while (begin < corpus.size()) {
    size_t end = corpus.find('\n', begin + chunk_bytes);
    end = end == std::string::npos ? corpus.size() : end + 1;
    chunks.push_back(corpus.substr(begin, end - begin));
    begin = end;
  }
  return chunks;
}

uint64_t fnv1a(uint64_t hash, int32_t id) {
  for (int shift = 0; shift < 32; shift += 8) {
    hash ^= (static_cast<uint32_t>(id) >> shift) & 0xFF;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s TOKENIZER_JSON CORPUS [CHUNK_BYTES=65536] [RUNS=5]\n", argv[0]);
    return 2;
  }
  const auto tokenizer = nanoserve::tokenizer::Tokenizer::from_hf_file(argv[1]);
  const std::string corpus = read_file(argv[2]);
  const size_t chunk_bytes = argc > 3 ? std::stoul(argv[3]) : 65536;
  const int runs = argc > 4 ? std::stoi(argv[4]) : 5;
  const std::vector<std::string> chunks = cut_into_chunks(corpus, chunk_bytes);

  // Only the encode() calls are timed; the ids are counted and hashed afterwards.
  double best_seconds = 1e30;
  std::vector<std::vector<int32_t>> ids(chunks.size());
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < chunks.size(); ++i) ids[i] = tokenizer.encode(chunks[i]);
    best_seconds = std::min(best_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  size_t tokens = 0;
  uint64_t hash = 0xCBF29CE484222325ull;
  for (const auto& chunk_ids : ids) {
    tokens += chunk_ids.size();
    for (const int32_t id : chunk_ids) hash = fnv1a(hash, id);
  }
  std::printf(
      "{\"impl\": \"nanoserve\", \"bytes\": %zu, \"chunks\": %zu, \"tokens\": %zu, \"ids_fnv1a\": \"%016llx\", "
      "\"best_seconds\": %.4f, \"mb_per_s\": %.2f}\n",
      corpus.size(), chunks.size(), tokens, static_cast<unsigned long long>(hash), best_seconds,
      static_cast<double>(corpus.size()) / 1e6 / best_seconds);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
  return 1;
}
