// GGUF version 3, llama.cpp's model file (docs/FORMATS.md "GGUF"), written so that llama.cpp
// can run the same weights difftx runs. All integers little-endian:
//   "GGUF", u32 version 3, u64 tensor count, u64 metadata count,
//   metadata: string key, u32 value type, value (strings: u64 length + bytes; arrays: u32
//             element type, u64 count, elements),
//   tensor infos: string name, u32 n_dims, u64 dims[n_dims] (innermost first), u32 ggml type,
//             u64 offset of its data from the data section's start,
//   padding to `general.alignment` (32), then every tensor's data, each starting aligned.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace difftx {

using GgufValue = std::variant<uint32_t, int32_t, uint64_t, float, bool, std::string, std::vector<std::string>,
                               std::vector<int32_t>, std::vector<float>>;

class GgufWriter {
 public:
  void add(const std::string& key, GgufValue value);
  // `shape` row-major as difftx stores tensors ([out, in] for a matrix): written innermost
  // first as GGUF wants it. `ggml_type` is ggml's type number (kernels/quant/weight_type.h has
  // them) and `data` the tensor's bytes in that type's layout, which the caller sizes
  // (weight_matrix_bytes); borrowed until write(). Names must be unique and at most 64 bytes
  // (llama.cpp's limit).
  void add_tensor(const std::string& name, const std::vector<int64_t>& shape, uint32_t ggml_type,
                  std::span<const uint8_t> data);
  // Writes the file atomically (io/atomic_file.h).
  void write(const std::filesystem::path& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    uint32_t ggml_type;
    std::span<const uint8_t> data;
  };
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

inline constexpr uint64_t kGgufAlignment = 32;

}  // namespace difftx
