// config.json of Motif Technologies' MotifForCausalLM (model_type "Motif" or "motif": Motif-2.6B
// and Motif-2-12.7B) <-> difftx's ModelConfig (docs/FORMATS.md "Motif"). Motif's tensors carry
// difftx's own names and row layout (docs/SPEC.md §2.5), so only the config is translated:
//   no num_noise_heads (2.6B):  `diff` with H = heads / 2, Hkv = kv_heads / 2 (adjacent heads paired)
//   num_noise_heads N (12.7B):  `diff_grouped` with r = (heads - N) / N, H = N r, Hkv = kv_heads / 2
// both with PolyNorm, the shifted lambda_init, rotate-half RoPE and attn_rms_norm_eps for the head norm.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/config.h"

namespace difftx::model {

bool is_motif_model_type(const std::string& model_type);  // "Motif" or "motif"

// Keys are an explicit list; an unknown key, or a known one with a value that changes the math in
// a way difftx does not compute, is an error naming it.
ModelConfig config_from_motif(const nlohmann::json& j, const std::string& where);

// Whether `c` has Motif's form: PolyNorm, DIFF V1's kv layout with the head norm and the shifted
// lambda_init schedule.
bool is_motif_config(const ModelConfig& c);
// The config.json for `c` (Error naming what Motif cannot hold).
nlohmann::json config_to_motif(const ModelConfig& c, const std::string& torch_dtype);

}  // namespace difftx::model
