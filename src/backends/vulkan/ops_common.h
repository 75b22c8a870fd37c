// What the op files (ops_*.cpp) share: push-constant fields, workgroup counts, the row norms' variants.
#pragma once
#include <cstdint>
#include <string>

namespace difftx::backends::vulkan {

// Invocations per workgroup of the element-wise shaders (add, scale, swiglu, add_bias, rope,
// gather_rows: local_size_x).
constexpr int64_t kElementGroup = 256;

inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
inline int64_t groups_of(int64_t n, int64_t size) { return (n + size - 1) / size; }

// The row norms' shader for rows of n floats (rmsnorm, layernorm, polynorm; shaders/norm_block.glsl):
// the first variant whose block holds the row (32 threads x 8 floats: DIFF's per-head norm; 128 x
// 16: a 1-2B model's hidden state; 256 x 16), the widest for wider rows, so a row is read in one
// round of loads up to 4096 floats without 256 threads for a row of 128. The variant depends on
// n alone: a row's bits do not depend on the rows dispatched with it.
inline std::string norm_shader(const char* op, int64_t n) {
  return std::string(op) + (n <= 256 ? "_256" : n <= 2048 ? "_2048" : "_4096");
}

}  // namespace difftx::backends::vulkan
