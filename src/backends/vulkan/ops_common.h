// What the op files (ops_*.cpp) share: push-constant fields and workgroup counts.
#pragma once
#include <cstdint>

namespace difftx::backends::vulkan {

// Invocations per workgroup of the element-wise shaders (add, scale, swiglu, add_bias, rope,
// gather_rows: local_size_x).
constexpr int64_t kElementGroup = 256;

inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
inline int64_t groups_of(int64_t n, int64_t size) { return (n + size - 1) / size; }

}  // namespace difftx::backends::vulkan
