// config.json of Hugging Face's LlamaForCausalLM (model_type "llama"), DiffLlamaForCausalLM
// ("diffllama"), MotifForCausalLM ("Motif" or "motif", motif_config.h) and Phi4FlashForCausalLM
// ("phi4flash", read only: phi4flash_config.h) <-> difftx's ModelConfig (docs/FORMATS.md "Hugging
// Face model directories").
//
// Keys that change the math are honoured or refused by name; the keys that do not (bookkeeping,
// generation and initialisation settings) are an explicit list; any other key is an error, so a
// model is never run with a setting silently ignored.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/config.h"
#include "model/formats/hf_layout.h"

namespace difftx::model {

enum class HfArchitecture { llama, diffllama, motif, phi4flash };

// Names the architecture config.json's model_type asks for; false for any other model_type.
bool hf_architecture_of(const std::string& model_type, HfArchitecture* out);

// The HF head layout of a config (DiffLlama counts both softmax maps in num_attention_heads).
struct HfHeads {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
};

struct HfConfig {
  HfArchitecture architecture;
  HfHeads hf;               // as the file states it
  ModelConfig model;        // difftx's view: for DiffLlama H = heads / 2 and the kv grouping of hf_layout.h
  DiffLlamaImport layout;   // DiffLlama: the row maps that give that view (empty for Llama)
};
HfConfig config_from_hf(const nlohmann::json& j, const std::string& where);

// The config.json transformers would write for `c` (baseline -> llama, diff -> diffllama, Motif's
// form (is_motif_config) -> Motif, a hybrid stack -> phi4flash (config_to_phi4flash); diff2 and the
// DIFF V1 ablations have no Hugging Face class: Error saying so). `torch_dtype` names the stored
// weight type ("float32", "bfloat16", "float16").
nlohmann::json config_to_hf(const ModelConfig& c, const std::string& torch_dtype);

}  // namespace difftx::model
