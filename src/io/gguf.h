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
#include <functional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace difftx::io {

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
  // A tensor whose `bytes` bytes are not in memory yet: write() asks its `data` for them, so that
  // a file larger than memory is written one tensor at a time.
  void add_tensor(const std::string& name, const std::vector<int64_t>& shape, uint32_t ggml_type, uint64_t bytes);
  // Called once for each tensor added by size, in the order added (`index` counts every tensor
  // added); the bytes it returns must stay valid until the next call.
  using TensorData = std::function<std::span<const uint8_t>(size_t index)>;
  // Writes the file atomically (io/atomic_file.h): the header, then every tensor's data in the
  // order added.
  void write(const std::filesystem::path& path, const TensorData& data = {}) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    uint32_t ggml_type;
    std::span<const uint8_t> data;
    uint64_t bytes;  // data.size(), or the size of the data write() asks for
    bool deferred;
  };
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

inline constexpr uint64_t kGgufAlignment = 32;

}  // namespace difftx::io
