#include "model/formats/hf_format.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_set.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_layout.h"
#include "model/formats/motif_config.h"
#include "model/formats/phi4flash_config.h"

namespace difftx::model {
namespace {

// The row maps of one attention projection, or null when its rows keep their order.
struct AttentionRowMaps {
  RowMap q, k, v;
  const RowMap* of(const std::string& name) const {
    if (name.ends_with(".self_attn.q_proj.weight")) return q.empty() ? nullptr : &q;
    if (name.ends_with(".self_attn.k_proj.weight")) return k.empty() ? nullptr : &k;
    if (name.ends_with(".self_attn.v_proj.weight")) return v.empty() ? nullptr : &v;
    return nullptr;
  }
};

// Tensors some checkpoints hold that are no weights: RoPE's inverse frequencies (older transformers
// versions) and cos / sin caches (early ColossalAI), recomputed from the config. vLLM's loaders skip
// the same three (Motif's fork: llama.py LlamaModel.load_weights).
bool is_buffer(const std::string& name) {
  return name.ends_with(".rotary_emb.inv_freq") || name.ends_with(".rotary_emb.cos_cached") ||
         name.ends_with(".rotary_emb.sin_cached");
}

bool is_kv_proj(const std::string& name) {
  return name.ends_with(".self_attn.k_proj.weight") || name.ends_with(".self_attn.v_proj.weight");
}

// DiffLlama's layout of the source with the fewest kv heads that lose nothing (hf_layout.h): a
// count that ties rows fits where every layer's k and v hold those rows equal, as a model read
// from that count holds them until it is trained; 2 Hkv ties none and always fits. The k and v
// matrices are read only when more than one count could fit.
DiffLlamaExport diffllama_layout(const WeightSource& source, const ParameterTable& table) {
  const ModelConfig& c = source.config();
  std::vector<DiffLlamaExport> fits;
  for (int64_t kv_heads : diffllama_hf_kv_head_counts(c.num_attention_heads, c.num_key_value_heads))
    fits.push_back(diffllama_export_layout(c.num_attention_heads, c.num_key_value_heads, c.head_dim, kv_heads));
  std::vector<float> rows;
  for (const ParamInfo& p : table.params()) {
    if (fits.size() == 1) break;
    if (!is_kv_proj(p.name)) continue;
    rows.resize(p.numel);
    source.read(p.name, rows);
    std::erase_if(fits, [&](const DiffLlamaExport& e) { return !tied_rows_agree(rows, p.shape[1], e.kv_source); });
  }
  DIFFTX_CHECK(!fits.empty(), "internal: no DiffLlama kv-head count holds the model's ", c.num_key_value_heads,
               " kv groups");
  return fits.front();
}

}  // namespace

std::unique_ptr<StoredModel> open_hf_model(const std::filesystem::path& dir, const nlohmann::json& config) {
  const HfConfig hc = config_from_hf(config, (dir / "config.json").string());
  auto model = std::make_unique<StoredModel>(dir, hc.model);
  const io::SafetensorsSet& weights = model->weights();
  const AttentionRowMaps maps{hc.layout.q, hc.layout.k, hc.layout.v};  // empty (rows in order) for Llama, Motif
  for (const ParamInfo& p : model->table().params()) {
    if (hc.architecture == HfArchitecture::diffllama && p.name.ends_with(".self_attn.subln.weight")) {  // DiffLlama's head norm has no gain: ones
      DIFFTX_CHECK(!weights.contains(p.name), weights.file_of(p.name).string(), ": DiffLlama has no tensor '",
                   p.name, "'");
      model->set_ones(p.name);
      continue;
    }
    if (const RowMap* map = maps.of(p.name))  // from HF's q heads or kv heads, head_dim rows each
      model->set_rows(p.name, {*map, (is_kv_proj(p.name) ? hc.hf.kv_heads : hc.hf.heads) * hc.hf.head_dim});
    model->check_tensor(p);
  }
  for (const std::string& name : weights.names()) {
    if (model->table().find(name) || is_buffer(name)) continue;
    if (name == "lm_head.weight" && hc.model.tie_word_embeddings) {
      // Some tied checkpoints store the head anyway: accepted when it is the embedding.
      const std::vector<float> head = weights.read_f32(name, std::vector<int64_t>{hc.model.vocab_size, hc.model.hidden_size});
      const ParamInfo& embed = *model->table().find("model.embed_tokens.weight");
      std::vector<float> embedding(embed.numel);
      model->read_into(embed, embedding.data());
      DIFFTX_CHECK(head == embedding, weights.file_of(name).string(),
                   ": 'lm_head.weight' differs from the embedding, but config.json ties them (tie_word_embeddings)");
      continue;
    }
    fail(weights.file_of(name).string(), ": tensor '", name.substr(0, 200),
         "' does not belong to the model config.json describes");
  }
  return model;
}

void save_hf_model(const Model& model, const std::filesystem::path& dir, io::StoredFloat stored) {
  require_f32_weights(model, "writing a Hugging Face directory");
  save_hf_model(ModelWeights(model), dir, stored);
}

void save_hf_model(const WeightSource& source, const std::filesystem::path& dir, io::StoredFloat stored) {
  const ModelConfig& c = source.config();
  const char* torch_dtype = stored == io::StoredFloat::bf16 ? "bfloat16" : stored == io::StoredFloat::f16 ? "float16" : "float32";
  nlohmann::json config = config_to_hf(c, torch_dtype);  // refuses what HF cannot hold

  const ParameterTable table(c);
  AttentionRowMaps maps;
  // Motif keeps difftx's rows, and a hybrid (Phi4Flash) Hugging Face's names and rows as they are.
  const bool hybrid = c.hybrid.has_value();
  const bool diffllama = !hybrid && c.attention == kernels::AttentionKind::diff && !is_motif_config(c);
  if (diffllama) {
    const DiffLlamaExport layout = diffllama_layout(source, table);
    maps = {layout.q, layout.k, layout.v};
    config["num_key_value_heads"] = layout.hf_kv_heads;  // config_to_hf's 2 Hkv, or fewer where they fit
  }
  // transformers rotates halves (the hybrid has no RoPE); within every head, whatever the heads' order
  if (!hybrid && c.rope_style == kernels::RopeStyle::interleaved) {
    const kernels::AttentionDims a = c.attention_dims(1, 1);
    const auto half = [&](const RowMap& m, int64_t width) {
      return m.empty() ? interleaved_to_half_rows(width, c.head_dim)
                       : compose(m, interleaved_to_half_rows(static_cast<int64_t>(m.size()), c.head_dim));
    };
    maps.q = half(maps.q, a.q_width());
    maps.k = half(maps.k, a.k_width());
  }

  const auto stored_as = [&](const ParamInfo& p) {
    return hybrid && phi4flash_keeps_f32(p.name) ? io::StoredFloat::f32 : stored;
  };
  std::vector<io::SafetensorsTensorSpec> specs;
  for (const ParamInfo& p : table.params()) {
    if (diffllama && p.name.ends_with(".self_attn.subln.weight")) continue;  // folded into o_proj below
    std::vector<int64_t> shape = p.shape;
    if (const RowMap* map = maps.of(p.name)) shape[0] = static_cast<int64_t>(map->size());
    specs.push_back({p.name, shape, io::stored_float_name(stored_as(p))});
  }
  std::vector<float> weights, rewritten, gain;  // one tensor at a time
  std::filesystem::create_directories(dir);
  io::write_safetensors(dir / "model.safetensors", specs, {{"format", "pt"}},
                        [&](const io::SafetensorsTensorSpec& spec) {
    const ParamInfo& p = *table.find(spec.name);
    weights.resize(p.numel);
    source.read(p.name, weights);
    std::span<const float> data(weights);
    if (const RowMap* map = maps.of(p.name)) {
      rewritten.resize(map->size() * p.shape[1]);
      gather_rows(weights.data(), p.shape[0], *map, p.shape[1] * int64_t{sizeof(float)}, rewritten.data());
      data = rewritten;
    } else if (diffllama && p.name.ends_with(".self_attn.o_proj.weight")) {
      // y = o_proj (g * n) = (o_proj diag(g)) n: the shared gain g of every head scales the
      // columns it multiplies (docs/MODEL.md §2.2).
      const std::string layer = p.name.substr(0, p.name.size() - std::string("o_proj.weight").size());
      const ParamInfo* g = table.find(layer + "subln.weight");
      DIFFTX_CHECK(g != nullptr, "internal: no head-norm gain for ", p.name);
      gain.resize(g->numel);
      source.read(g->name, gain);
      float* o = weights.data();
      const int64_t cols = p.shape[1], width = 2 * c.head_dim;
      for (int64_t r = 0; r < p.shape[0]; ++r)
        for (int64_t col = 0; col < cols; ++col) o[r * cols + col] *= gain[col % width];
    }
    return io::SafetensorsEntry{p.name, spec.shape, data, stored_as(p)};
  });
  io::write_json_file(dir / "config.json", config);
}

}  // namespace difftx::model
