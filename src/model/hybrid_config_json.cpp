#include "model/hybrid_config_json.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "model/formats/config_keys.h"

namespace difftx::model {
namespace {

using nlohmann::json;

constexpr LayerKind kKinds[] = {LayerKind::mamba,          LayerKind::memory_mamba, LayerKind::sliding_attention,
                                LayerKind::full_attention, LayerKind::gmu,          LayerKind::cross_attention};

LayerKind layer_kind_from_json(const json& v, size_t l, const std::string& where) {
  for (LayerKind kind : kKinds)
    if (v == json(layer_kind_name(kind))) return kind;
  fail(where, ": layer ", l, " is ", io::json_value_for_message(v), ", not a layer kind (mamba, memory_mamba, ",
       "sliding_attention, full_attention, gmu, cross_attention)");
}

void check_fields(const json& j, const std::set<std::string>& fields, const std::string& where) {
  DIFFTX_CHECK(j.is_object(), where, " must be an object, got ", io::json_value_for_message(j));
  for (const auto& [key, value] : j.items())
    DIFFTX_CHECK(fields.count(key), where, ": unknown field '", key.substr(0, 64), "'");
}

}  // namespace

json hybrid_to_json(const HybridConfig& h) {
  json layers = json::array();
  for (LayerKind kind : h.layers) layers.push_back(layer_kind_name(kind));
  return {{"layers", layers},
          {"sliding_window", h.sliding_window},
          {"shared_kv_layer", h.shared_kv_layer},
          {"layer_norm_eps", h.layer_norm_eps},
          {"mamba",
           {{"d_state", h.mamba.d_state}, {"d_conv", h.mamba.d_conv}, {"expand", h.mamba.expand},
            {"dt_rank", h.mamba.dt_rank}}}};
}

HybridConfig hybrid_from_json(const json& j, const std::string& where) {
  const std::string w = where + ": key 'hybrid'";
  check_fields(j, {"layers", "sliding_window", "shared_kv_layer", "layer_norm_eps", "mamba"}, w);
  HybridConfig h;
  DIFFTX_CHECK(j.contains("layers") && j.at("layers").is_array(), w, ": 'layers' must be a list of layer kinds");
  for (const json& kind : j.at("layers")) h.layers.push_back(layer_kind_from_json(kind, h.layers.size(), w));
  h.sliding_window = positive_int(j, "sliding_window", w);
  DIFFTX_CHECK(j.contains("shared_kv_layer"), w, ": missing field 'shared_kv_layer'");
  const json& shared = j.at("shared_kv_layer");
  DIFFTX_CHECK(shared.is_number_integer() && shared.get<int64_t>() >= -1, w,
               ": 'shared_kv_layer' must be a layer index, or -1 for none, got ", io::json_value_for_message(shared));
  h.shared_kv_layer = shared.get<int64_t>();
  DIFFTX_CHECK(j.contains("layer_norm_eps"), w, ": missing field 'layer_norm_eps'");
  h.layer_norm_eps = positive_number(j, "layer_norm_eps", 0, w);
  DIFFTX_CHECK(j.contains("mamba"), w, ": missing field 'mamba'");
  const json& m = j.at("mamba");
  check_fields(m, {"d_state", "d_conv", "expand", "dt_rank"}, w + ": 'mamba'");
  h.mamba.d_state = positive_int(m, "d_state", w + ": 'mamba'");
  h.mamba.d_conv = positive_int(m, "d_conv", w + ": 'mamba'");
  h.mamba.expand = positive_int(m, "expand", w + ": 'mamba'");
  h.mamba.dt_rank = positive_int(m, "dt_rank", w + ": 'mamba'");
  return h;
}

}  // namespace difftx::model
