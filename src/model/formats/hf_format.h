// Hugging Face model directories (docs/FORMATS.md "Hugging Face model directories"): config.json
// of LlamaForCausalLM or DiffLlamaForCausalLM and safetensors weights as transformers names
// them, in one file or sharded, F32/BF16/F16. Reading maps them onto difftx's baseline and DIFF V1
// (hf_layout.h); writing is the inverse, with interleaved RoPE rows turned into rotate-half ones
// and the DIFF V1 head-norm gain folded into o_proj.
#pragma once
#include <filesystem>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/formats/stored_matrices.h"
#include "model/model.h"

namespace difftx {

// `config` is the directory's parsed config.json (model_type "llama" or "diffllama").
Model load_hf_model(const std::filesystem::path& dir, const nlohmann::json& config, MatrixPrecision precision);

// Writes config.json and model.safetensors (floats stored as `stored`). Error for a model that
// has no Hugging Face class (DIFF V2, the DIFF V1 ablations).
void save_hf_model(const Model& model, const std::filesystem::path& dir, StoredFloat stored);

}  // namespace difftx
