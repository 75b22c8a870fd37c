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

// The ggml tensor types difftx writes, with ggml's numbering.
enum class GgmlType : uint32_t { f32 = 0, f16 = 1, q4_0 = 2, q8_0 = 8, q4_k = 12, bf16 = 30 };
const char* ggml_type_name(GgmlType type);
// Bytes of one row of `columns` elements (columns must be a whole number of the type's blocks).
uint64_t ggml_row_bytes(GgmlType type, int64_t columns);

using GgufValue = std::variant<uint32_t, int32_t, uint64_t, float, bool, std::string, std::vector<std::string>,
                               std::vector<int32_t>, std::vector<float>>;

class GgufWriter {
 public:
  void add(const std::string& key, GgufValue value);
  // `shape` row-major as difftx stores tensors ([out, in] for a matrix): written innermost
  // first as GGUF wants it. `data` is borrowed until write(); its size must equal the rows times
  // ggml_row_bytes of the last dimension. Names must be unique and at most 64 bytes (llama.cpp's
  // limit).
  void add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgmlType type,
                  std::span<const uint8_t> data);
  // Writes the file atomically (io/atomic_file.h).
  void write(const std::filesystem::path& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    GgmlType type;
    std::span<const uint8_t> data;
  };
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

inline constexpr uint64_t kGgufAlignment = 32;

}  // namespace difftx
