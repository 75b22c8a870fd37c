#include "model/formats/stored_model.h"

#include <algorithm>

#include "core/error.h"
#include "model/finite_weights.h"

namespace difftx::model {

StoredModel::StoredModel(const std::filesystem::path& dir, const ModelConfig& config)
    : dir_(dir),
      config_(config),
      table_(config),
      weights_(dir),
      weights_file_(dir / (std::filesystem::exists(dir / io::kSafetensorsFile) ? io::kSafetensorsFile : io::kSafetensorsIndexFile)) {}

const RowSource* StoredModel::rows_of(const std::string& name) const {
  const auto it = rows_.find(name);
  return it == rows_.end() ? nullptr : &it->second;
}

void StoredModel::check_tensor(const ParamInfo& p) const {
  DIFFTX_CHECK(weights_.contains(p.name), dir_.string(), ": missing tensor '", p.name, "' that config.json calls for");
  const RowSource* rows = rows_of(p.name);
  DIFFTX_CHECK(!rows || static_cast<int64_t>(rows->map.size()) == p.shape[0], "internal: row map of ", p.name);
  check_weight(weights_, p.name, p, rows);
}

void StoredModel::read_into(const ParamInfo& p, void* dst) const {
  if (ones_.count(p.name)) {
    DIFFTX_CHECK(!p.packed(), "internal: ", p.name, " holds ones but is placed as ", kernels::weight_type_name(p.type));
    std::fill_n(static_cast<float*>(dst), p.numel, 1.0f);
    return;
  }
  read_weight(weights_, p.name, p, dst, rows_of(p.name));
}

void StoredModel::read(const std::string& name, std::span<float> out) const {
  const ParamInfo* p = table_.find(name);
  DIFFTX_CHECK(p != nullptr, "internal: ", dir_.string(), " has no tensor '", name, "'");
  DIFFTX_CHECK(static_cast<int64_t>(out.size()) == p->numel, "internal: tensor '", name, "' has ", p->numel,
               " elements, the destination ", out.size());
  read_into(*p, out.data());
  require_finite_tensor(out, name, weights_file_.string());
}

MatrixTypes StoredModel::stored_types() const {
  MatrixTypes types;
  for (const ParamInfo& p : table_.params())
    if (p.packable() && !ones_.count(p.name) && weights_.contains(p.name))
      if (const kernels::WeightType t = stored_weight_type(weights_, p.name); t != kernels::WeightType::f32)
        types[p.name] = t;
  return types;
}

}  // namespace difftx::model
