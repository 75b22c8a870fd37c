// NumPy .npy arrays (docs/FORMATS.md "npy"): magic "\x93NUMPY", version, header length, a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
// spaces and a newline, then the raw data in C order.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace difftx::io {

template <typename T>
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<T> data;  // C order
};

// Writes float32 data ('<f4', version 1.0, header padded to 64 bytes) atomically
// (io/atomic_file.h). Error when data.size() differs from the shape's element count.
void write_npy(const std::filesystem::path& path, const std::vector<int64_t>& shape,
               std::span<const float> data);

// Reads a little-endian, C-order array of '<f4' (read_npy_f32) or '<i4' / '<i8'
// (read_npy_i64), versions 1.0 to 3.0. Everything else, and any header or size that does
// not add up, is an Error naming the file.
NpyArray<float> read_npy_f32(const std::filesystem::path& path);
NpyArray<int64_t> read_npy_i64(const std::filesystem::path& path);

}  // namespace difftx::io
