#include "serve/ids.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>

namespace difftx::serve {
namespace {

uint64_t random_bits() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace

std::string unique_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  char digits[32];
  std::snprintf(digits, sizeof digits, "%016llx%08llx", static_cast<unsigned long long>(random_bits()),
                static_cast<unsigned long long>(counter++ & 0xffffffffull));
  return prefix + std::string(digits);
}

std::string random_alphanumerics(int count) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s;
  for (int i = 0; i < count; ++i) s += kAlphabet[random_bits() % 62];
  return s;
}

}  // namespace difftx::serve
