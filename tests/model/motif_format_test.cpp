// Motif checkpoints (src/model/formats/motif_config.h): the config mapping of both model sizes,
// refusals by name, lambda_init's shifted schedule, and write -> read round trips (the bytes of a
// Motif directory come back unchanged). The float64 oracle of the forward pass is tools/oracle's.
#include <gtest/gtest.h>
#include "source_dir.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/rng.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_format.h"
#include "model/formats/motif_config.h"
#include "model/model_io.h"
#include "model/parameters.h"
#include "support/testing.h"

namespace difftx::model {

using kernels::AttentionKind;

namespace {

using nlohmann::json;
using testing::TempDir;

// Motif-2-12.7B's config.json keys and shape (docs/FORMATS.md "Motif").
json motif_12b() {
  return json{{"architectures", {"MotifForCausalLM"}}, {"model_type", "Motif"}, {"vocab_size", 219520},
              {"hidden_size", 4096}, {"intermediate_size", 16384}, {"num_hidden_layers", 40},
              {"num_attention_heads", 40}, {"num_key_value_heads", 16}, {"head_dim", 128},
              {"num_noise_heads", 8}, {"k_ratio", 1}, {"grouped_ratio", 4}, {"hidden_act", "poly_norm"},
              {"rms_norm_eps", 1e-6}, {"attn_rms_norm_eps", 1e-5}, {"rope_theta", 1000000.0},
              {"tie_word_embeddings", false}, {"max_position_embeddings", 16384}, {"use_bias", false},
              {"torch_dtype", "float32"}, {"bos_token_id", 219396}, {"eos_token_id", 219395},
              {"auto_map", {{"AutoModelForCausalLM", "modeling_motif.MotifForCausalLM"}}}};
}

std::string motif_config_error(const json& j) {
  try {
    config_from_hf(j, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MotifConfig, GroupedCheckpointIsDiffGroupedWithItsRatio) {
  const HfConfig hc = config_from_hf(motif_12b(), "config.json");
  const ModelConfig& c = hc.model;
  EXPECT_EQ(hc.architecture, HfArchitecture::motif);
  EXPECT_EQ(c.attention, AttentionKind::diff_grouped);
  EXPECT_EQ(c.grouped_ratio, 4);
  EXPECT_EQ(c.num_attention_heads, 32);  // signal heads: 8 groups of 4
  EXPECT_EQ(c.num_key_value_heads, 8);   // kv pairs
  EXPECT_EQ(c.head_dim, 128);
  const kernels::AttentionVariant a = c.attention_variant();
  EXPECT_EQ(a.q_width(), 40 * 128);
  EXPECT_EQ(a.k_width(), 16 * 128);
  EXPECT_EQ(a.v_width(), 16 * 128);
  EXPECT_EQ(a.out_width(), 32 * 2 * 128);
  EXPECT_EQ(c.hidden_act, MlpActivation::poly_norm);
  EXPECT_EQ(c.rope_style, kernels::RopeStyle::half);
  EXPECT_DOUBLE_EQ(c.head_norm_epsilon(), 1e-5);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-6);
  EXPECT_FALSE(c.tie_word_embeddings);
  // lambda_init = 0.8 - 0.6 exp(-0.3 (l - 1)) for 0-based l.
  EXPECT_NEAR(c.lambda_init(0), 0.8 - 0.6 * std::exp(0.3), 1e-15);
  EXPECT_NEAR(c.lambda_init(1), 0.2, 1e-15);
  EXPECT_NEAR(c.lambda_init(5), 0.8 - 0.6 * std::exp(-1.2), 1e-15);
  // The parameter count of the 12.7B: embeddings, 40 layers, final norm, untied head.
  const int64_t per_layer = 4096 * (40 * 128 + 16 * 128 * 2) + 32 * 256 * 4096 + 4 * 128 + 256 +
                            3 * 4096 * 16384 + 4 + 2 * 4096;
  EXPECT_EQ(c.total_parameters(), 2 * 219520 * 4096 + 40 * per_layer + 4096);
}

TEST(MotifConfig, PlainCheckpointIsDiffWithAdjacentHeadsPaired) {
  json j = motif_12b();
  for (const char* key : {"num_noise_heads", "k_ratio", "grouped_ratio", "head_dim"}) j.erase(key);
  j["model_type"] = "motif";
  j["hidden_size"] = 256;
  j["num_attention_heads"] = 16;  // 2.6B-like: d = hidden / heads, 8 differential heads
  j["num_key_value_heads"] = 16;
  j["tie_word_embeddings"] = true;
  const ModelConfig c = config_from_hf(j, "config.json").model;
  EXPECT_EQ(c.attention, AttentionKind::diff);
  EXPECT_EQ(c.num_attention_heads, 8);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.attention_variant().q_width(), 256);
}

TEST(MotifConfig, RefusesWhatChangesTheMathByName) {
  auto with = [](const char* key, const json& value) {
    json j = motif_12b();
    j[key] = value;
    return motif_config_error(j);
  };
  EXPECT_NE(with("k_ratio", 3).find("'k_ratio'"), std::string::npos);
  EXPECT_NE(with("hidden_act", "silu").find("'hidden_act'"), std::string::npos);
  EXPECT_NE(with("grouped_ratio", 3).find("'grouped_ratio'"), std::string::npos);
  EXPECT_EQ(with("grouped_ratio", "4"), R"(config.json: key 'grouped_ratio' must be a number, got "4")");
  EXPECT_NE(with("use_sliding_window", true).find("'use_sliding_window'"), std::string::npos);
  EXPECT_NE(with("use_bias", true).find("'use_bias'"), std::string::npos);
  EXPECT_NE(with("qk_norm", true).find("unknown key 'qk_norm'"), std::string::npos);
  EXPECT_NE(with("num_noise_heads", 7).find("num_noise_heads"), std::string::npos);       // 40 % 7 != 0
  EXPECT_NE(with("num_key_value_heads", 15).find("must be even"), std::string::npos);
  EXPECT_NE(with("num_key_value_heads", 32).find("Hkv"), std::string::npos);              // 16 pairs, 8 noise heads
  EXPECT_NE(with("architectures", json::array({"LlamaForCausalLM"})).find("'architectures'"), std::string::npos);
  EXPECT_EQ(with("fused_rope", true), "");  // a kernel switch only
  // Motif's vLLM fork (motif.py, MotifAttention) requires head_dim with num_noise_heads
  json no_head_dim = motif_12b();
  no_head_dim.erase("head_dim");
  EXPECT_NE(motif_config_error(no_head_dim).find("'head_dim'"), std::string::npos) << motif_config_error(no_head_dim);
}

// RoPE buffers a checkpoint may hold (inv_freq, and the cos / sin caches of early ColossalAI) are
// skipped, as Motif's vLLM fork skips them: the model read is the one without them.
TEST(MotifFormat, RopeBuffersAreSkipped) {
  const std::filesystem::path fixture = std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf/motif_r4_kv2_bf16";
  const io::SafetensorsReader original(fixture / "model.safetensors");
  std::vector<std::vector<float>> data;
  data.reserve(original.names().size());  // the entries borrow these
  std::vector<io::SafetensorsEntry> entries;
  for (const std::string& name : original.names()) {
    data.push_back(original.read_f32(name));
    entries.push_back({name, original.info(name).shape, std::span<const float>(data.back())});
  }
  const std::vector<float> buffer(8 * 16, 0.5f);
  for (const char* name : {"inv_freq", "cos_cached", "sin_cached"})
    entries.push_back({std::string("model.layers.1.self_attn.rotary_emb.") + name, {8, 16}, std::span<const float>(buffer)});
  TempDir dir;
  std::filesystem::copy_file(fixture / "config.json", dir / "config.json");
  io::write_safetensors(dir / "model.safetensors", entries);
  const Model with_buffers = load_model_dir(dir.path()), plain = load_model_dir(fixture);
  ASSERT_EQ(with_buffers.table.total_floats(), plain.table.total_floats());
  for (int64_t i = 0; i < plain.table.total_floats(); ++i)
    ASSERT_EQ(with_buffers.host_weights()[i], plain.host_weights()[i]) << i;
}

ModelConfig tiny_motif(AttentionKind kind, int64_t heads, int64_t kv, int64_t ratio, bool tied) {
  ModelConfig c;
  c.attention = kind;
  c.grouped_ratio = ratio;
  c.hidden_act = MlpActivation::poly_norm;
  c.lambda_init_shifted = true;
  c.head_norm_eps = 1e-5;
  c.rms_norm_eps = 1e-6;
  c.vocab_size = 40;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = heads;
  c.num_key_value_heads = kv;
  c.head_dim = 8;
  c.intermediate_size = 48;
  c.max_position_embeddings = 64;
  c.rope_style = kernels::RopeStyle::half;
  c.rope_theta = 1e6;
  c.tie_word_embeddings = tied;
  c.validate();
  return c;
}

// HF -> difftx -> HF gives back the same bytes; the model read has the weights written (no row
// moves, the subln gain kept as a tensor).
TEST(MotifFormat, WriteThenReadIsLossless) {
  struct Case { AttentionKind kind; int64_t heads, kv, ratio; bool tied; };
  for (const Case k : {Case{AttentionKind::diff_grouped, 8, 2, 4, false}, Case{AttentionKind::diff_grouped, 4, 1, 2, true},
                       Case{AttentionKind::diff, 2, 1, 1, true}}) {
    Model original(tiny_motif(k.kind, k.heads, k.kv, k.ratio, k.tied));
    init_parameters(original.config, original.table, original.host_weights(), 11);
    Rng rng(12);
    for (int64_t i = 0; i < original.weight_floats(); ++i) original.host_weights()[i] += static_cast<float>(0.1 * rng.normal());
    TempDir dir;
    save_hf_model(original, dir.path(), io::StoredFloat::f32);
    const json written = io::read_json_file(dir / "config.json");
    EXPECT_EQ(written["model_type"], "Motif");
    EXPECT_EQ(written["num_attention_heads"], original.config.attention_variant().maps());
    EXPECT_EQ(written["num_key_value_heads"], 2 * k.kv);
    EXPECT_EQ(written.contains("num_noise_heads"), k.kind == AttentionKind::diff_grouped);
    const Model loaded = load_model_dir(dir.path());
    EXPECT_EQ(config_to_json(loaded.config), config_to_json(original.config));
    for (const ParamInfo& p : original.table.params())
      for (int64_t i = 0; i < p.numel; ++i)
        ASSERT_EQ(loaded.host_weights()[p.offset + i], original.host_weights()[p.offset + i]) << p.name << "[" << i << "]";
    TempDir again;
    save_hf_model(loaded, again.path(), io::StoredFloat::f32);
    EXPECT_EQ(io::read_whole_file(dir / "model.safetensors"), io::read_whole_file(again / "model.safetensors"));
    EXPECT_EQ(io::read_json_file(dir / "config.json"), io::read_json_file(again / "config.json"));
  }
}

TEST(MotifFormat, ModelsWithoutMotifsFormAreRefused) {
  TempDir dir;
  ModelConfig c = tiny_motif(AttentionKind::diff_grouped, 8, 2, 4, false);
  c.lambda_init_shifted = false;
  const std::string error = testing::error_of([&] { save_hf_model(Model(c), dir.path(), io::StoredFloat::f32); });
  EXPECT_NE(error.find("cannot be written as Motif"), std::string::npos) << error;
  c = tiny_motif(AttentionKind::diff_grouped, 8, 2, 4, false);
  c.hidden_act = MlpActivation::silu;
  const std::string silu = testing::error_of([&] { save_hf_model(Model(c), dir.path(), io::StoredFloat::f32); });
  EXPECT_NE(silu.find("diff_grouped"), std::string::npos) << silu;
}

}  // namespace
}  // namespace difftx::model
