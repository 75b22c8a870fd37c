// config.json of Microsoft's Phi4FlashForCausalLM (model_type "phi4flash": Phi-4-mini-flash-reasoning,
// the SambaY hybrid) -> difftx's ModelConfig with a HybridConfig (docs/FORMATS.md "Phi-4-mini-flash").
// The tensors keep Hugging Face's names and rows (model/parameters.cpp's hybrid schema), so only the
// config is translated: DIFF V1 with H = num_attention_heads / 2 pair-heads over Hkv / 2 key/value
// pairs of head_dim = hidden_size / num_attention_heads (heads split "(H two) D", adjacent heads
// paired, difftx's own layout), the exp lambda_init schedule over absolute layer indices, a head
// norm of eps 1e-5, and the SambaY layout of layer kinds.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/config.h"

namespace difftx::model {

bool is_phi4flash_model_type(const std::string& model_type);  // "phi4flash"

// Keys are an explicit list; the Mamba keys take the config class's defaults when absent; an
// unknown key, or a known one with a value that changes the math in a way difftx does not
// compute, is an error naming it.
ModelConfig config_from_phi4flash(const nlohmann::json& j, const std::string& where);

// The config.json the config class writes for `c`, with every Mamba key explicit (mamba_dt_rank
// "auto" when it is ceil(D / 16)) and torch_dtype `torch_dtype`: config_from_phi4flash reads `c`
// back. Error naming what differs for a model that is not SambaY (another layout of layer kinds,
// head norm eps or head width than Phi4Flash fixes).
nlohmann::json config_to_phi4flash(const ModelConfig& c, const std::string& torch_dtype);

// The tensors Phi4Flash creates as float32 parameters whatever the model's dtype (`A_log`, `D`,
// the lambdas): a BF16 or F16 checkpoint keeps them F32, and so does hf_format.cpp's writer.
bool phi4flash_keeps_f32(const std::string& tensor_name);

// SambaY's layer kinds for L layers (L a multiple of 4, h = L / 2): Mamba at even l < h and at
// l = h (the memory), sliding-window attention at odd l < h, full attention at h + 1, then GMU at
// even and cross-attention at odd layers.
std::vector<LayerKind> sambay_layers(int64_t layers);

}  // namespace difftx::model
