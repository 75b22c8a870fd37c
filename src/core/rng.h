// Deterministic random numbers: the same seed gives the same stream on every machine
// (std::normal_distribution is implementation-defined, so we do not use it).
#pragma once
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "core/hash.h"

namespace difftx {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  // splitmix64: a full-period 64-bit generator with good statistical quality.
  uint64_t next_u64() { return mix64(state_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return (next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return next_u64() % n; }
  // Standard normal by Box-Muller (one value per call; the second is discarded for simplicity).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  uint64_t state() const { return state_; }
  // As if next_u64 had been called `draws` times (splitmix64's state is a counter), so that a
  // stream can be cut into pieces drawn in parallel; normal() takes 2 draws, uniform() 1.
  void skip(uint64_t draws) { state_ += draws * 0x9E3779B97F4A7C15ull; }

 private:
  uint64_t state_;
};

// The generator of one cell of a seeded grid, e.g. (step, row): each field goes through a full
// splitmix64 round before the next is mixed in, so nearby tuples give unrelated streams.
inline Rng derive_rng(uint64_t seed, std::initializer_list<uint64_t> fields) {
  Rng rng(seed);
  for (uint64_t field : fields) rng = Rng(rng.next_u64() ^ field);
  return rng;
}

}  // namespace difftx
