// Storage types of inference weight matrices and their facts. A matrix is [rows, cols] = [out,
// in] (docs/SPEC.md §1: y = x W^T); each row is stored on its own, in blocks along `cols`. The block
// types have GGML's layouts byte for byte (docs/FORMATS.md, "Inference weight types"), so the
// same bytes can be written into a GGUF file.
//
// A type is one registration: its entry in weight_type.cpp's table (the facts below, as ggml's
// type_traits), and its kernels in each CPU level's table (kernels/quant/type_kernels.h).
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace difftx::kernels {

enum class WeightType { f32, bf16, f16, q8_0, q4_0, q4_k };
inline constexpr int kWeightTypeCount = 6;

struct WeightTypeInfo {
  WeightType type;
  const char* name;  // as GGML and `--dtype` spell it: "f32", "bf16", "q8_0", ...; the Vulkan shaders' suffix
  int64_t block_weights;  // weights per block (1 for the float types)
  int64_t block_bytes;    // bytes per block
  uint32_t ggml_type;     // GGML's ggml_type number (GGUF tensor info)
  uint32_t gguf_file_type;  // llama.cpp's llama_ftype of a file whose matrices have this type (general.file_type)
  const char* safetensors_dtype;  // the float types' own dtype; a block type's rows are "U8" bytes
  // The most |dequantize(quantize(x)) - x| can be, relative to the largest |x| of its block (of
  // the weight itself for the float types), for x without F16 subnormals (weight_traits_test.cpp)
  double round_trip_error;

  bool is_block() const { return block_weights > 1; }
};

// Bytes per weight of a float type (f32, bf16, f16).
constexpr int64_t float_weight_bytes(WeightType type) { return type == WeightType::f32 ? 4 : 2; }

// Every type, in the enum's order.
std::span<const WeightTypeInfo> weight_types();
const WeightTypeInfo& weight_type_info(WeightType type);
inline const char* weight_type_name(WeightType type) { return weight_type_info(type).name; }

// "f32", "bf16", "f16", "q8_0", "q4_0", "q4_k" (case-insensitive); anything else is an error
// that lists the names.
WeightType parse_weight_type(const std::string& name);

// The type of GGML's type number `ggml_type`; one difftx has no type for is an error naming it.
WeightType weight_type_of_ggml(uint32_t ggml_type);

// Bytes of one row of `cols` weights. Throws unless cols >= 0 is a multiple of the block size.
int64_t weight_row_bytes(WeightType type, int64_t cols);

// Bytes of a rows x cols matrix, with overflow-checked multiplication.
int64_t weight_matrix_bytes(WeightType type, int64_t rows, int64_t cols);

}  // namespace difftx::kernels
