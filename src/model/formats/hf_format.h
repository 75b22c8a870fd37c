// Hugging Face model directories (docs/FORMATS.md "Hugging Face model directories"): config.json
// of LlamaForCausalLM or DiffLlamaForCausalLM and safetensors weights as transformers names
// them, in one file or sharded, F32/BF16/F16. Reading maps them onto difftx's baseline and DIFF V1
// (hf_layout.h); writing is the inverse, with interleaved RoPE rows turned into rotate-half ones,
// the DIFF V1 head-norm gain folded into o_proj, and DiffLlama's kv heads the fewest that hold
// the k and v rows as they are (an odd count read in is written back).
#pragma once
#include <filesystem>
#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/formats/stored_model.h"
#include "model/model.h"
#include "model/weight_source.h"

namespace difftx::model {

// `config` is the directory's parsed config.json (model_type "llama" or "diffllama"). Opens the
// directory and checks every tensor's presence, dtype and shape; reads no weight, except a stored
// head of a tied model, compared with the embedding.
std::unique_ptr<StoredModel> open_hf_model(const std::filesystem::path& dir, const nlohmann::json& config);

// Writes config.json and model.safetensors (floats stored as `stored`). Error for a model that
// has no Hugging Face class (DIFF V2, the DIFF V1 ablations), or (a model in memory) whose
// matrices are not F32.
void save_hf_model(const Model& model, const std::filesystem::path& dir, io::StoredFloat stored);
// The same from a source read one tensor at a time (a few tensors in memory at once).
void save_hf_model(const WeightSource& source, const std::filesystem::path& dir, io::StoredFloat stored);

}  // namespace difftx::model
