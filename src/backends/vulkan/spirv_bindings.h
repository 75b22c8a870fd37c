// What the backend reads of a compute shader's SPIR-V. Which storage-buffer bindings of set 0 it
// may write: a binding is read-only when its variable, or every member of its block, is decorated
// NonWritable (GLSL `readonly`). The stream orders commands by what they read and write (stream.h),
// so this is what lets two dispatches that only read a buffer run without a barrier between them.
// And what its workgroup asks of the device (its size, its shared memory), checked against the
// device's limits before its pipeline is created (pipelines.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace difftx::backends::vulkan {

// writes[b]: binding b of set 0 may be written (true for a binding the shader does not declare
// or that aliases a writable one). Error on words that are not a SPIR-V module.
std::vector<bool> writable_bindings(std::span<const uint32_t> words, size_t bindings);

// A compute shader's workgroup: its size (LocalSize, or the WorkgroupSize constant's defaults) and
// the bytes of its shared variables (their scalars' sizes summed: a driver may pad them further).
struct WorkgroupNeeds {
  uint32_t size[3] = {1, 1, 1};
  int64_t shared_bytes = 0;
  uint64_t invocations() const { return uint64_t{size[0]} * size[1] * size[2]; }
};
WorkgroupNeeds workgroup_needs(std::span<const uint32_t> words);

}  // namespace difftx::backends::vulkan
