// Which storage-buffer bindings of set 0 a compute shader may write, read from its SPIR-V: a
// binding is read-only when its variable, or every member of its block, is decorated NonWritable
// (GLSL `readonly`). The stream orders commands by what they read and write (stream.h), so this
// is what lets two dispatches that only read a buffer run without a barrier between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace difftx::backends::vulkan {

// writes[b]: binding b of set 0 may be written (true for a binding the shader does not declare
// or that aliases a writable one). Error on words that are not a SPIR-V module.
std::vector<bool> writable_bindings(std::span<const uint32_t> words, size_t bindings);

}  // namespace difftx::backends::vulkan
