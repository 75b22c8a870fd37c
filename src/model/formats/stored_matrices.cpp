#include "model/formats/stored_matrices.h"

#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/quant/quantize.h"

namespace difftx::model {

using kernels::WeightType;

namespace {

bool is_block_type(WeightType t) { return kernels::weight_type_info(t).is_block(); }

// The matrix's [rows, cols] as the file stores it, checked against its dtype's rules.
void stored_shape(const io::SafetensorsSet& weights, const std::string& name, WeightType type, int64_t& rows,
                  int64_t& cols) {
  const io::SafetensorsTensorInfo& info = weights.info(name);
  const std::string where = weights.file_of(name).string() + ": tensor '" + name + "'";
  DIFFTX_CHECK(info.shape.size() == 2, where, " is a matrix, but has ", info.shape.size(), " dimensions");
  rows = info.shape[0];
  cols = info.shape[1];
  if (!is_block_type(type)) return;
  const kernels::WeightTypeInfo& t = kernels::weight_type_info(type);
  DIFFTX_CHECK(cols % t.block_bytes == 0, where, " (", t.name, ") has rows of ", cols, " bytes, not a whole number of ",
               t.block_bytes, "-byte blocks");
  cols = cols / t.block_bytes * t.block_weights;
}

}  // namespace

WeightType stored_weight_type(const io::SafetensorsSet& weights, const std::string& name) {
  const std::string& dtype = weights.info(name).dtype;
  if (dtype == "F64") return WeightType::f32;  // widened to F32 when read
  for (const kernels::WeightTypeInfo& t : kernels::weight_types())
    if (!t.is_block() && dtype == t.safetensors_dtype) return t.type;
  const auto& metadata = weights.metadata_of(name);
  const auto entry = metadata.find(kWeightTypeKeyPrefix + name);
  const std::string where = weights.file_of(name).string() + ": tensor '" + name + "'";
  DIFFTX_CHECK(dtype == "U8" && entry != metadata.end(), where, " has dtype ", dtype,
               dtype == "U8" ? " but no \"" + (kWeightTypeKeyPrefix + name) + "\" entry in the header's __metadata__ "
               "naming its weight type" : std::string(", expected F32, BF16, F16 or U8 blocks"));
  const WeightType type = [&] {
    try {
      return kernels::parse_weight_type(entry->second);
    } catch (const Error& e) {
      fail(where, ": ", e.what());
    }
  }();
  DIFFTX_CHECK(is_block_type(type), where, " is stored as U8 bytes of weight type ", entry->second,
               ", which is not a block type (q8_0, q4_0, q4_k)");
  return type;
}

void check_weight(const io::SafetensorsSet& weights, const std::string& name, const ParamInfo& p,
                  const RowSource* row_map) {
  const WeightType stored = p.is_matrix() ? stored_weight_type(weights, name) : WeightType::f32;
  if (!p.is_matrix() || (!row_map && p.type == WeightType::f32 && !is_block_type(stored))) {
    weights.check_f32(name, p.shape);
    return;
  }
  int64_t rows = 0, cols = 0;
  stored_shape(weights, name, stored, rows, cols);
  const int64_t expected_rows = row_map ? row_map->source_rows : p.shape[0];
  DIFFTX_CHECK(rows == expected_rows && cols == p.shape[1], weights.file_of(name).string(), ": tensor '", name,
               "' holds a ", rows, " x ", cols, " matrix, config.json implies ", expected_rows, " x ", p.shape[1]);
  DIFFTX_CHECK(stored == p.type || p.type == WeightType::f32, "internal: ", name, " is stored as ",
               kernels::weight_type_name(stored), " but placed as ", kernels::weight_type_name(p.type));
  if (!is_block_type(stored) && (row_map || stored != p.type)) weights.check_f32(name, std::nullopt);
}

void read_weight(const io::SafetensorsSet& weights, const std::string& name, const ParamInfo& p, void* dst,
                 const RowSource* row_map) {
  check_weight(weights, name, p, row_map);
  const WeightType stored = p.is_matrix() ? stored_weight_type(weights, name) : WeightType::f32;
  if (!p.is_matrix() || (!row_map && p.type == WeightType::f32 && !is_block_type(stored))) {
    weights.read_f32(name, std::span<float>(static_cast<float*>(dst), p.numel), p.shape);
    return;
  }
  int64_t rows = 0, cols = 0;
  stored_shape(weights, name, stored, rows, cols);
  if (!row_map && stored == p.type) {
    weights.read_bytes(name, std::span<unsigned char>(static_cast<unsigned char*>(dst), p.bytes()));
    return;
  }
  // The whole matrix in p's type, rows as the file orders them.
  std::vector<unsigned char> source(kernels::weight_matrix_bytes(p.type, rows, cols));
  if (stored == p.type) {
    weights.read_bytes(name, source);
  } else if (is_block_type(stored)) {
    std::vector<unsigned char> blocks(kernels::weight_matrix_bytes(stored, rows, cols));
    weights.read_bytes(name, blocks);
    backends::cpu::kernels().dequantize_rows(stored, blocks.data(), reinterpret_cast<float*>(source.data()), rows, cols);
  } else {
    weights.read_f32(name, std::span<float>(reinterpret_cast<float*>(source.data()), rows * cols));
  }
  const int64_t row_bytes = kernels::weight_row_bytes(p.type, cols);
  if (row_map) gather_rows(source.data(), rows, row_map->map, row_bytes, dst);
  else std::memcpy(dst, source.data(), source.size());
}

std::vector<float> widened_weight(const Model& model, const ParamInfo& p) {
  if (!p.packed()) return std::vector<float>(model.host_weights() + p.offset, model.host_weights() + p.offset + p.numel);
  std::vector<float> out(p.numel);
  backends::cpu::kernels().dequantize_rows(p.type, model.host_packed() + p.byte_offset, out.data(), p.shape[0], p.shape[1]);
  return out;
}

io::SafetensorsTensorSpec packed_spec(const ParamInfo& p, std::map<std::string, std::string>& metadata) {
  std::vector<int64_t> shape = p.shape;
  if (is_block_type(p.type)) {
    shape[1] = p.bytes() / p.shape[0];
    metadata[kWeightTypeKeyPrefix + p.name] = kernels::weight_type_name(p.type);
  }
  return {p.name, shape, kernels::weight_type_info(p.type).safetensors_dtype};
}

io::SafetensorsEntry packed_entry(const Model& model, const ParamInfo& p,
                                  std::map<std::string, std::string>& metadata) {
  const std::span<const unsigned char> bytes(model.host_packed() + p.byte_offset, p.bytes());
  io::SafetensorsTensorSpec spec = packed_spec(p, metadata);
  return {p.name, std::move(spec.shape), io::StoredBytes{std::move(spec.dtype), bytes}};
}

}  // namespace difftx::model
