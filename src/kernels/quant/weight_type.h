// Storage types of inference weight matrices and their sizes. A matrix is [rows, cols] = [out,
// in] (docs/SPEC.md §1: y = x W^T); each row is stored on its own, in blocks along `cols`. The block
// types have GGML's layouts byte for byte (docs/FORMATS.md, "Inference weight types"), so the
// same bytes can be written into a GGUF file.
#pragma once
#include <cstdint>
#include <string>

namespace difftx {

enum class WeightType { f32, bf16, f16, q8_0, q4_0, q4_k };

struct WeightTypeInfo {
  const char* name;       // as GGML and `--dtype` spell it: "f32", "bf16", "q8_0", ...
  int64_t block_weights;  // weights per block (1 for the float types)
  int64_t block_bytes;    // bytes per block
  uint32_t ggml_type;     // GGML's ggml_type number (GGUF tensor info)
};

const WeightTypeInfo& weight_type_info(WeightType type);
inline const char* weight_type_name(WeightType type) { return weight_type_info(type).name; }

// "f32", "bf16", "f16", "q8_0", "q4_0", "q4_k" (case-insensitive); anything else is an error
// that lists the names.
WeightType parse_weight_type(const std::string& name);

// Bytes of one row of `cols` weights. Throws unless cols >= 0 is a multiple of the block size.
int64_t weight_row_bytes(WeightType type, int64_t cols);

// Bytes of a rows x cols matrix, with overflow-checked multiplication.
int64_t weight_matrix_bytes(WeightType type, int64_t rows, int64_t cols);

}  // namespace difftx
