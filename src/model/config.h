// Model configuration: the config.json of docs/SPEC.md §3, validated.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kernels/attention/attention.h"
#include "kernels/ops.h"

namespace difftx::model {

// The MLP's gate (docs/SPEC.md §1): SwiGLU's silu, or Motif's PolyNorm (§1.1).
enum class MlpActivation { silu, poly_norm };

// What mixes the tokens in a layer of a hybrid stack (HybridConfig; docs/MODEL.md "SambaY").
enum class LayerKind {
  mamba,              // Mamba-1
  memory_mamba,       // Mamba-1 whose scan output (with the D skip, before the gate) the GMU layers read
  sliding_attention,  // differential attention over the last sliding_window keys
  full_attention,     // causal differential attention whose keys and values the cross layers reuse
  gmu,                // out_proj(memory * silu(in_proj(x)))
  cross_attention,    // queries of its own against the full_attention layer's keys and values
};
const char* layer_kind_name(LayerKind kind);

// Mamba-1's sizes (kernels/mamba.h): E = expand * hidden_size channels, S = d_state, K = d_conv,
// R = dt_rank (the width of dt before dt_proj).
struct MambaConfig {
  int64_t d_state = 16, d_conv = 4, expand = 2, dt_rank = 0;
};

// A hybrid stack in place of docs/SPEC.md's decoder, where each layer is x += mixer(LN(x));
// x += fc2(up * silu(gate)), [gate | up] = fc1(LN(x)), LN a LayerNorm with a bias, no positional
// encoding, and the attention layers DIFF V1 (`attention` "diff", ModelConfig's heads) with
// biased projections. Phi-4-mini-flash's SambaY (formats/phi4flash_config.h) is the one layout.
struct HybridConfig {
  std::vector<LayerKind> layers;  // one per layer
  int64_t sliding_window = 0;     // keys a sliding_attention layer sees, the current one included
  int64_t shared_kv_layer = -1;   // the full_attention layer the cross_attention layers read
  MambaConfig mamba;
  double layer_norm_eps = 1e-5;

  int64_t mamba_channels(int64_t hidden_size) const { return mamba.expand * hidden_size; }
};

struct ModelConfig {
  kernels::AttentionKind attention = kernels::AttentionKind::baseline;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;                // D
  int64_t num_hidden_layers = 0;          // L
  int64_t num_attention_heads = 0;        // H, as docs/SPEC.md §2 defines it per variant
  int64_t num_key_value_heads = 0;        // Hkv
  int64_t head_dim = 0;                   // d, width of one softmax map
  int64_t intermediate_size = 0;          // F
  int64_t max_position_embeddings = 0;
  double rope_theta = 10000.0;
  kernels::RopeStyle rope_style = kernels::RopeStyle::interleaved;
  kernels::RopeScaling rope_scaling;               // none unless config.json's `rope_scaling` says otherwise
  double rms_norm_eps = 1e-5;
  bool tie_word_embeddings = true;
  std::optional<double> lambda_init_constant;  // empty: the "exp" schedule of docs/SPEC.md §2.2
  bool lambda_init_shifted = false;            // "exp_shifted": the schedule one layer later (Motif)
  bool diff_subln = true;
  std::optional<double> head_norm_eps;         // the head norm's eps; empty: rms_norm_eps
  int64_t grouped_ratio = 1;                   // diff_grouped: signal heads per noise head (r, §2.5)
  MlpActivation hidden_act = MlpActivation::silu;
  std::optional<HybridConfig> hybrid;          // set: a hybrid stack (HybridConfig); empty: docs/SPEC.md's decoder

  // docs/SPEC.md §2.2: 0.8 - 0.6 exp(-0.3 (l - 1)) for l = layer_index + 1 (l = layer_index when
  // shifted), or the constant.
  double lambda_init(int64_t layer_index) const;
  double head_norm_epsilon() const { return head_norm_eps.value_or(rms_norm_eps); }
  kernels::AttentionVariant attention_variant() const {
    return {attention, num_attention_heads, num_key_value_heads, head_dim, grouped_ratio};
  }
  kernels::AttentionDims attention_dims(int64_t B, int64_t T) const;
  // DIFF V1's headwise RMSNorm and (1 - lambda_init) factor (docs/SPEC.md §2.2 Eq. 3), unless ablated.
  bool has_head_norm() const { return attention_variant().v1_layout() && diff_subln; }
  // Parameters without the token embedding (and without a tied head), as docs/SPEC.md §4 counts FLOPs.
  int64_t non_embedding_parameters() const;
  int64_t total_parameters() const;
  // Model FLOPs of one forward over B sequences of T tokens (docs/SPEC.md §4: 2 x non-embedding
  // parameters per token including the LM head, plus causal attention).
  double forward_flops(int64_t B, int64_t T) const;

  void validate() const;  // throws difftx::Error naming the inconsistent key
  // Error naming `what` for a hybrid model: the paths written for docs/SPEC.md's decoder alone
  // (training, the analyses, a draft model) call this first.
  void require_decoder(const std::string& what) const;
};

// Parse config.json text/object. Unknown keys are errors, except the bookkeeping keys other
// tools write (architectures, torch_dtype, ...), which are accepted when harmless. `where`
// names the source in messages (a file path).
ModelConfig config_from_json(const nlohmann::json& j, const std::string& where);
ModelConfig config_from_file(const std::string& path);
nlohmann::json config_to_json(const ModelConfig& c);

// config.json's `rope_scaling` (null, or {"rope_type" | "type": "default" | "linear" | "llama3", ...}
// with the keys that type needs): parsed and range-checked, other types refused by name; and back.
kernels::RopeScaling rope_scaling_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json rope_scaling_to_json(const kernels::RopeScaling& scaling);

// The docs/SPEC.md §1 default for F: 8/3 D rounded up to a multiple of 64.
int64_t default_intermediate_size(int64_t hidden_size);

}  // namespace difftx::model
