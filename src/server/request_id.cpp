#include "server/request_id.h"

#include <random>
#include <string_view>

namespace nanoserve::server {
namespace {

std::mt19937_64& thread_rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

std::string random_request_id(const std::string& prefix) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(thread_rng())];
  return id;
}

uint64_t random_seed() { return thread_rng()(); }

}  // namespace nanoserve::server
