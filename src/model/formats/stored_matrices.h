// Matrices in a storage type inside safetensors files (docs/FORMATS.md "Weight storage types"):
//   F32, BF16, F16   the safetensors dtype of that name, shape [rows, cols];
//   Q8_0, Q4_0, Q4_K dtype U8, shape [rows, bytes per row] (GGML's block layout, row by row), and
//                    the type in the file's "__metadata__" under "difftx.weight_type.<tensor name>".
// Shared by the format adapters: they read a matrix into the place a ParamInfo gives it (the F32
// arena, widened, or the packed arena as stored) and write packed matrices back.
#pragma once
#include <map>
#include <string>

#include "io/safetensors.h"
#include "io/safetensors_set.h"
#include "model/formats/hf_layout.h"
#include "model/model.h"

namespace difftx::model {

inline constexpr const char* kWeightTypeKeyPrefix = "difftx.weight_type.";

// A matrix whose rows the file orders otherwise: dst row r <- row map[r] of the file's tensor,
// which holds source_rows rows.
struct RowSource {
  RowMap map;
  int64_t source_rows = 0;
};

// How a model's matrices are held once loaded.
enum class MatrixPrecision {
  f32,        // widened to F32 (training, checkpoints, the analyses that read weights)
  as_stored,  // in the type the file stores them in (inference); vectors are always F32
};

// The storage type of tensor `name` in the file; error for a U8 tensor without its metadata entry
// or a dtype that no weight type has.
kernels::WeightType stored_weight_type(const io::SafetensorsSet& weights, const std::string& name);

// The checks read_weight makes before it reads (the tensor's dtype, its weight type and shape
// against p and `rows`), so that a whole directory can be checked before any tensor is read.
void check_weight(const io::SafetensorsSet& weights, const std::string& name, const ParamInfo& p,
                  const RowSource* rows = nullptr);

// Reads tensor `name` into `dst`, p's place (p.bytes() bytes: widened to F32 or as stored, as
// p.type says), its rows taken in the order of `rows` when given (the file then holds
// rows->source_rows rows). Errors name the file, the tensor and the shape expected.
void read_weight(const io::SafetensorsSet& weights, const std::string& name, const ParamInfo& p, void* dst,
                 const RowSource* rows = nullptr);

// p's weights widened to F32, wherever the model holds them.
std::vector<float> widened_weight(const Model& model, const ParamInfo& p);

// How a matrix held in p.type is written (shape and dtype); block types add their type to
// `metadata`.
io::SafetensorsTensorSpec packed_spec(const ParamInfo& p, std::map<std::string, std::string>& metadata);

// The safetensors entry of a packed matrix (borrowing the model's bytes); block types add their
// type to `metadata`.
io::SafetensorsEntry packed_entry(const Model& model, const ParamInfo& p, std::map<std::string, std::string>& metadata);

}  // namespace difftx::model
