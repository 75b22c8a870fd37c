// Hugging Face model directories (src/model/formats/): config mapping, the DiffLlama row
// permutation, RoPE scaling, and write -> read round trips. The independent oracle (a float64
// HF forward pass) is tests/model/hf_import_test.cpp with tools/oracle's fixtures.
#include <gtest/gtest.h>
#include "source_dir.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "core/rng.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_format.h"
#include "model/formats/hf_layout.h"
#include "model/model_io.h"
#include "model/parameters.h"
#include "support/testing.h"

namespace difftx::model {

using io::StoredFloat;
using kernels::AttentionKind;
using kernels::RopeStyle;

namespace {

using nlohmann::json;
using testing::TempDir;

json hf_config(const char* type, int heads, int kv_heads) {
  return json{{"model_type", type}, {"architectures", {"X"}}, {"vocab_size", 40}, {"hidden_size", 32},
              {"intermediate_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", heads},
              {"num_key_value_heads", kv_heads}, {"head_dim", 8}, {"rms_norm_eps", 1e-5},
              {"rope_theta", 10000.0}, {"tie_word_embeddings", true}, {"bos_token_id", 1},
              {"eos_token_id", {2, 3}}, {"hidden_act", "silu"}, {"attention_bias", false},
              {"torch_dtype", "bfloat16"}, {"transformers_version", "4.48.0"}};
}

std::string error_of(const json& j) {
  try {
    config_from_hf(j, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RopeScaling, Llama3BandsKeepDivideAndBlend) {
  // theta 10000, d 8: inv_freq 1, 0.1, 0.01, 0.001, wavelengths 6.3, 63, 628, 6283. With an
  // original context of 1024, low 1 and high 4: wavelengths under 256 keep their frequency,
  // over 1024 are divided by the factor (8), 628 is blended (values worked out by hand).
  const kernels::RopeScaling s{kernels::RopeScalingType::llama3, 8.0, 1.0, 4.0, 1024.0};
  EXPECT_DOUBLE_EQ(backends::cpu::kernels().rope_inverse_frequency(0, 8, 10000.0, s), 1.0);
  EXPECT_NEAR(backends::cpu::kernels().rope_inverse_frequency(1, 8, 10000.0, s), 0.1, 1e-15);
  EXPECT_NEAR(backends::cpu::kernels().rope_inverse_frequency(2, 8, 10000.0, s), 0.003086760967011274, 1e-15);
  EXPECT_NEAR(backends::cpu::kernels().rope_inverse_frequency(3, 8, 10000.0, s), 0.000125, 1e-15);
  const kernels::RopeScaling linear{kernels::RopeScalingType::linear, 4.0};
  EXPECT_NEAR(backends::cpu::kernels().rope_inverse_frequency(1, 8, 10000.0, linear), 0.025, 1e-15);
  EXPECT_DOUBLE_EQ(backends::cpu::kernels().rope_inverse_frequency(2, 8, 10000.0, {}), std::pow(10000.0, -0.5));
}

TEST(RopeScaling, LinearTableIsThePlainTableAtScaledPositions) {
  std::vector<float> plain(kernels::rope_table_floats(64, 8)), scaled(kernels::rope_table_floats(16, 8));
  const kernels::RopeTable p = backends::cpu::kernels().rope_table_build(plain.data(), 64, 8, 10000.0, {});
  const kernels::RopeTable s = backends::cpu::kernels().rope_table_build(scaled.data(), 16, 8, 10000.0, {kernels::RopeScalingType::linear, 4.0});
  for (int64_t t = 0; t < 16; ++t)
    for (int64_t i = 0; i < 4; ++i) {
      // position t with factor 4 turns by the angle of position t / 4: compare where that is whole
      if (t % 4 != 0) continue;
      EXPECT_NEAR(s.cos[t * 4 + i], p.cos[(t / 4) * 4 + i], 1e-6);
      EXPECT_NEAR(s.sin[t * 4 + i], p.sin[(t / 4) * 4 + i], 1e-6);
    }
}

TEST(HfConfig, ReadsLlamaAndDiffLlamaHeads) {
  const HfConfig llama = config_from_hf(hf_config("llama", 4, 2), "c");
  EXPECT_EQ(llama.model.attention, AttentionKind::baseline);
  EXPECT_EQ(llama.model.num_attention_heads, 4);
  EXPECT_EQ(llama.model.num_key_value_heads, 2);
  EXPECT_EQ(llama.model.rope_style, RopeStyle::half);

  struct Case { int hf_heads, hf_kv, heads, kv; };
  // even kv heads halve; odd ones keep one group per distinct (a, b) pair; MQA stays MQA
  for (const Case c : {Case{8, 8, 4, 4}, {8, 4, 4, 2}, {8, 2, 4, 1}, {6, 3, 3, 3}, {6, 1, 3, 1}, {12, 3, 6, 3}}) {
    const HfConfig diff = config_from_hf(hf_config("diffllama", c.hf_heads, c.hf_kv), "c");
    EXPECT_EQ(diff.model.attention, AttentionKind::diff);
    EXPECT_EQ(diff.model.num_attention_heads, c.heads) << c.hf_heads << "/" << c.hf_kv;
    EXPECT_EQ(diff.model.num_key_value_heads, c.kv) << c.hf_heads << "/" << c.hf_kv;
    EXPECT_FALSE(diff.model.lambda_init_constant.has_value());
  }
}

TEST(HfConfig, RefusesWhatChangesTheMathByName) {
  json j = hf_config("llama", 4, 2);
  j["attention_bias"] = true;
  EXPECT_NE(error_of(j).find("attention_bias"), std::string::npos);
  j = hf_config("llama", 4, 2);
  j["hidden_act"] = "gelu";
  EXPECT_NE(error_of(j).find("hidden_act"), std::string::npos);
  j = hf_config("llama", 4, 2);
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_NE(error_of(j).find("'yarn' is not supported"), std::string::npos);
  j = hf_config("llama", 4, 2);
  j["sliding_window"] = 4096;
  EXPECT_NE(error_of(j).find("unknown key 'sliding_window'"), std::string::npos);
  j = hf_config("diffllama", 1 << 30, 1);
  EXPECT_NE(error_of(j).find("above the largest supported"), std::string::npos);
  j = hf_config("diffllama", 5, 5);
  EXPECT_NE(error_of(j).find("must be even"), std::string::npos);
  j = hf_config("llama", 4, 2);
  j["eos_token_id"] = "</s>";
  EXPECT_NE(error_of(j).find("eos_token_id"), std::string::npos);
  j = hf_config("llama", 4, 2);
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 4.0},
                       {"high_freq_factor", 1.0}, {"original_max_position_embeddings", 8192}};
  EXPECT_NE(error_of(j).find("low_freq_factor < high_freq_factor"), std::string::npos);
}

// Keys real checkpoints carry that no forward pass reads: transformers 4.x's generation defaults,
// loaders' bookkeeping, SmolLM2's flags, a null sliding_window.
TEST(HfConfig, AcceptsPretrainedConfigsOwnKeys) {
  json j = hf_config("llama", 4, 2);
  j["max_length"] = 20;
  j["do_sample"] = false;
  j["_attn_implementation_autoset"] = true;
  j["transformers.js_config"] = json::object();
  j["is_llama_config"] = true;
  j["rope_interleaved"] = false;
  j["sliding_window"] = nullptr;
  EXPECT_EQ(error_of(j), "");
}

TEST(HfLayout, ExportInvertsImport) {
  // Even kv heads copy nothing; odd ones (and MQA) are read into several groups, and written back
  // from the first.
  for (const auto& [heads, kv] : {std::pair{8, 8}, {8, 4}, {8, 2}, {4, 2}, {6, 3}, {6, 1}, {12, 3}, {2, 1}}) {
    const DiffLlamaImport in = diffllama_import_layout(heads, kv, 4);
    const DiffLlamaExport out = diffllama_export_layout(in.heads, in.kv_heads, 4, kv);
    EXPECT_EQ(out.hf_heads, heads);
    EXPECT_EQ(out.hf_kv_heads, kv);
    EXPECT_EQ(out.kv_source, in.k);
    // HF row r went to difftx row out.q[r]; importing reads it back from HF row in.q[out.q[r]].
    ASSERT_EQ(out.q.size(), static_cast<size_t>(heads * 4));
    ASSERT_EQ(out.k.size(), static_cast<size_t>(kv * 4));
    for (size_t r = 0; r < out.q.size(); ++r) EXPECT_EQ(in.q[out.q[r]], static_cast<int64_t>(r));
    for (size_t r = 0; r < out.k.size(); ++r) EXPECT_EQ(in.k[out.k[r]], static_cast<int64_t>(r));
    for (size_t r = 0; r < out.v.size(); ++r) EXPECT_EQ(in.v[out.v[r]], static_cast<int64_t>(r));
  }
  EXPECT_THROW(diffllama_export_layout(3, 3, 4, 2), Error);  // 2 kv heads make one group of 3 heads, not 3
}

TEST(HfLayout, KvHeadCountsAreEveryImportOfTheGroups) {
  EXPECT_EQ(diffllama_hf_kv_head_counts(4, 2), (std::vector<int64_t>{4}));   // even: nothing to tie
  EXPECT_EQ(diffllama_hf_kv_head_counts(3, 3), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(diffllama_hf_kv_head_counts(6, 3), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(diffllama_hf_kv_head_counts(3, 1), (std::vector<int64_t>{1, 2}));  // MQA: k1 = k2, or not
  EXPECT_EQ(diffllama_hf_kv_head_counts(16, 4), (std::vector<int64_t>{8}));
  for (int64_t H : {1, 2, 3, 5, 6, 12})
    for (int64_t Hkv = 1; Hkv <= H; ++Hkv) {
      if (H % Hkv != 0) continue;
      const std::vector<int64_t> counts = diffllama_hf_kv_head_counts(H, Hkv);
      EXPECT_NE(std::find(counts.begin(), counts.end(), 2 * Hkv), counts.end()) << H << "/" << Hkv;
      for (int64_t k : counts) EXPECT_EQ(diffllama_import_layout(2 * H, k, 2).kv_heads, Hkv) << H << "/" << Hkv;
    }
}

TEST(HfLayout, TiedRowsAgreeOnlyWhenBitEqual) {
  const RowMap source = {0, 1, 0};  // rows 0 and 2 read one source row
  std::vector<float> m = {1, 2, 3, 4, 1, 2};
  EXPECT_TRUE(tied_rows_agree(m, 2, source));
  m[5] = -m[5];
  EXPECT_FALSE(tied_rows_agree(m, 2, source));
  m = {0.0f, 2, 3, 4, -0.0f, 2};  // equal values, different bits
  EXPECT_FALSE(tied_rows_agree(m, 2, source));
  EXPECT_TRUE(tied_rows_agree(m, 2, RowMap{0, 1, 2}));
  EXPECT_THROW(tied_rows_agree(m, 4, source), Error);
  EXPECT_THROW(tied_rows_agree(m, 2, RowMap{0, 1, 3}), Error);
}

TEST(HfLayout, OddKvHeadsDuplicateRowsOfTheirPair) {
  // H = 6 query heads over 3 kv heads (n = 2): differential head i uses kv heads i / 2 and
  // (i + 3) / 2, i.e. (0, 1), (0, 2), (1, 2): three groups, k = [k_a | k_b].
  const DiffLlamaImport in = diffllama_import_layout(6, 3, 2);
  EXPECT_EQ(in.kv_heads, 3);
  EXPECT_EQ(in.k, (RowMap{0, 1, 2, 3, 0, 1, 4, 5, 2, 3, 4, 5}));
  EXPECT_EQ(in.q, (RowMap{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11}));
}

TEST(HfLayout, InterleavedToHalfKeepsPairsTogether) {
  EXPECT_EQ(interleaved_to_half_rows(8, 4), (RowMap{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_THROW(interleaved_to_half_rows(6, 4), Error);
}

ModelConfig tiny_config(AttentionKind kind, int64_t heads, int64_t kv, RopeStyle rope) {
  ModelConfig c;
  c.attention = kind;
  c.vocab_size = 37;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = heads;
  c.num_key_value_heads = kv;
  c.head_dim = 8;
  c.intermediate_size = 48;
  c.max_position_embeddings = 64;
  c.rope_style = rope;
  c.tie_word_embeddings = false;
  c.rope_scaling = {kernels::RopeScalingType::llama3, 4.0, 1.0, 4.0, 16.0};
  return c;
}

// Random weights; for DIFF V1 also head-norm gains away from 1, so that folding them matters.
Model random_model(const ModelConfig& c, uint64_t seed) {
  Model m(c);
  init_parameters(c, m.table, m.host_weights(), seed);
  Rng rng(seed + 1);
  for (const ParamInfo& p : m.table.params())
    if (p.name.find("subln") != std::string::npos || p.name.find("layernorm") != std::string::npos)
      for (int64_t i = 0; i < p.numel; ++i) m.host_weights()[p.offset + i] = static_cast<float>(0.5 + rng.uniform());
  return m;
}

std::vector<float> logits_of(const Model& m, const std::vector<int32_t>& ids) {
  Activations acts(m.config, 1, static_cast<int64_t>(ids.size()));
  std::vector<float> out(ids.size() * m.config.vocab_size);
  decoder_logits(m, acts, ids.data(), out.data());
  return out;
}

TEST(HfFormat, WriteThenReadGivesTheSameLogits) {
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4};
  struct Case { AttentionKind kind; int64_t heads, kv; RopeStyle rope; };
  for (const Case k : {Case{AttentionKind::baseline, 4, 2, RopeStyle::interleaved},
                       {AttentionKind::baseline, 4, 4, RopeStyle::half},
                       {AttentionKind::diff, 2, 1, RopeStyle::interleaved},
                       {AttentionKind::diff, 4, 2, RopeStyle::half},
                       {AttentionKind::diff, 2, 2, RopeStyle::interleaved},
                       {AttentionKind::diff, 3, 3, RopeStyle::interleaved},  // rows untied: 6 kv heads
                       {AttentionKind::diff, 3, 1, RopeStyle::half}}) {      // k1 != k2: 2 kv heads
    const Model original = random_model(tiny_config(k.kind, k.heads, k.kv, k.rope), 7);
    TempDir dir;
    save_hf_model(original, dir.path(), StoredFloat::f32);
    const json written = io::read_json_file(dir / "config.json");
    EXPECT_EQ(written["model_type"], k.kind == AttentionKind::diff ? "diffllama" : "llama");
    EXPECT_EQ(written["num_key_value_heads"], k.kind == AttentionKind::diff ? 2 * k.kv : k.kv);
    const Model loaded = load_model_dir(dir.path());
    EXPECT_EQ(loaded.config.num_attention_heads, k.heads);
    EXPECT_EQ(loaded.config.num_key_value_heads, k.kv);
    const auto a = logits_of(original, ids), b = logits_of(loaded, ids);
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]) / (1e-3 + std::abs(a[i])));
    EXPECT_LT(worst, 1e-4) << "attention " << kernels::attention_kind_name(k.kind) << " heads " << k.heads << "/"
                           << k.kv;

    // HF -> difftx -> HF is lossless: the second file has the first file's bytes.
    TempDir again;
    save_hf_model(loaded, again.path(), StoredFloat::f32);
    EXPECT_EQ(io::read_whole_file(dir / "model.safetensors"), io::read_whole_file(again / "model.safetensors"));
  }
}

// The tensors of a safetensors file, name -> its dtype, shape and bytes.
std::map<std::string, std::string> tensors_of(const std::filesystem::path& file) {
  const io::SafetensorsReader reader(file);
  std::map<std::string, std::string> out;
  for (const std::string& name : reader.names()) {
    const io::SafetensorsTensorInfo& t = reader.info(name);
    std::string bytes(t.data_end - t.data_begin, '\0');
    reader.read_bytes(name, {reinterpret_cast<unsigned char*>(bytes.data()), bytes.size()});
    std::string shape;
    for (int64_t n : t.shape) shape += std::to_string(n) + ",";
    out[name] = t.dtype + "[" + shape + "]" + bytes;
  }
  return out;
}

// transformers' DiffLlama with an odd num_key_value_heads (tools/oracle's fixtures: 6 heads over
// 3, and MQA 4 over 1) reads into DIFF V1 with rows copied into several kv groups; written back,
// it is the checkpoint's own heads and tensors again, not 2Hkv kv heads of copies.
TEST(HfFormat, OddKvHeadsRoundTripToTheCheckpoint) {
  const std::filesystem::path fixtures = std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf";
  struct Case { const char* name; int64_t hf_kv, kv; StoredFloat stored; };
  for (const Case k : {Case{"diffllama_kv3_odd_f32_untied", 3, 3, StoredFloat::f32},
                       {"diffllama_kv1_f16_sharded", 1, 1, StoredFloat::f16}}) {
    SCOPED_TRACE(k.name);
    const std::filesystem::path src = fixtures / k.name;
    const json original = io::read_json_file(src / "config.json");
    ASSERT_EQ(original["num_key_value_heads"], k.hf_kv);
    const Model loaded = load_model_dir(src);
    EXPECT_EQ(loaded.config.num_key_value_heads, k.kv);
    TempDir out;
    save_hf_model(loaded, out.path(), k.stored);
    const json written = io::read_json_file(out / "config.json");
    for (const char* key : {"num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size"})
      EXPECT_EQ(written[key], original[key]) << key;
    std::map<std::string, std::string> want;
    if (std::filesystem::exists(src / "model.safetensors")) {
      want = tensors_of(src / "model.safetensors");
    } else {
      for (const auto& e : std::filesystem::directory_iterator(src))
        if (e.path().extension() == ".safetensors") want.merge(tensors_of(e.path()));
    }
    const std::map<std::string, std::string> got = tensors_of(out / "model.safetensors");
    EXPECT_EQ(got.size(), want.size());
    for (const auto& [name, bytes] : want) {
      ASSERT_TRUE(got.count(name)) << name;
      EXPECT_TRUE(got.at(name) == bytes) << name;
    }
  }
}

// DiffLlama's q/k/v rows are gathered through row maps, still from exactly the heads x head_dim
// rows config.json implies: a checkpoint with more kv heads, or fewer, than it states is refused
// naming the tensor, not read with the wrong rows.
TEST(HfFormat, DiffLlamaRowsMustBeTheConfigsHeads) {
  const std::filesystem::path fixtures = std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf";
  struct Case { const char* name; int kv_heads; const char* error; };
  for (const Case k : {Case{"diffllama_mha_f32", 1, "'model.layers.0.self_attn.k_proj.weight' holds a 32 x 32 matrix, "
                                                   "config.json implies 8 x 32"},
                       {"diffllama_kv1_f16_sharded", 2, "'model.layers.0.self_attn.k_proj.weight' holds a 8 x 32 "
                                                        "matrix, config.json implies 16 x 32"}}) {
    SCOPED_TRACE(k.name);
    TempDir dir;
    std::filesystem::copy(fixtures / k.name, dir.path(), std::filesystem::copy_options::recursive);
    json config = io::read_json_file(dir / "config.json");
    config["num_key_value_heads"] = k.kv_heads;
    io::write_json_file(dir / "config.json", config);
    const std::string e = testing::error_of([&] { load_model_dir(dir.path()); });
    EXPECT_NE(e.find(k.error), std::string::npos) << e;
  }
}

// A model whose copied rows training moved apart keeps the math by writing 2Hkv kv heads; one
// whose copies agree is written with the fewer, even with its RoPE rows interleaved.
TEST(HfFormat, TiedKvRowsWriteFewerKvHeadsWithTheSameLogits) {
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  Model original = random_model(tiny_config(AttentionKind::diff, 3, 3, RopeStyle::interleaved), 11);
  const DiffLlamaExport three = diffllama_export_layout(3, 3, 8, 3);
  for (const ParamInfo& p : original.table.params()) {
    if (!p.name.ends_with("k_proj.weight") && !p.name.ends_with("v_proj.weight")) continue;
    float* w = original.host_weights() + p.offset;
    const int64_t cols = p.shape[1];
    for (int64_t j = 0; j < p.shape[0]; ++j)  // every row the copy of the first read from its HF row
      std::memmove(w + j * cols, w + three.k[three.kv_source[j]] * cols, cols * sizeof(float));
  }
  TempDir dir;
  save_hf_model(original, dir.path(), StoredFloat::f32);
  EXPECT_EQ(io::read_json_file(dir / "config.json")["num_key_value_heads"], 3);
  const Model loaded = load_model_dir(dir.path());
  EXPECT_EQ(loaded.config.num_key_value_heads, 3);
  const auto a = logits_of(original, ids), b = logits_of(loaded, ids);
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]) / (1e-3 + std::abs(a[i])));
  EXPECT_LT(worst, 1e-4);

  // One copy moved by one ulp in one layer: no longer three kv heads' worth.
  const ParamInfo& k1 = *original.table.find("model.layers.1.self_attn.k_proj.weight");
  // k rows are the HF heads [0 1 | 0 2 | 1 2] of width 8: row 16 starts the second read of head 0
  float& x = original.host_weights()[k1.offset + 16 * k1.shape[1]];
  x = std::nextafter(x, 1e9f);
  TempDir moved;
  save_hf_model(original, moved.path(), StoredFloat::f32);
  EXPECT_EQ(io::read_json_file(moved / "config.json")["num_key_value_heads"], 6);
}

TEST(HfFormat, SixteenBitStorageRoundsEveryWeightOnce) {
  const Model original = random_model(tiny_config(AttentionKind::baseline, 4, 2, RopeStyle::half), 3);
  for (const StoredFloat stored : {StoredFloat::bf16, StoredFloat::f16}) {
    TempDir dir;
    save_hf_model(original, dir.path(), stored);
    const io::SafetensorsReader reader(dir / "model.safetensors");
    EXPECT_EQ(reader.info("model.embed_tokens.weight").dtype, io::stored_float_name(stored));
    const Model loaded = load_model_dir(dir.path());
    // Half an ulp: relative for normal numbers, and for F16 at most half its smallest subnormal.
    const float relative = stored == StoredFloat::bf16 ? 0x1p-8f : 0x1p-11f;
    const float absolute = stored == StoredFloat::bf16 ? 0.0f : 0x1p-25f;
    for (int64_t i = 0; i < original.table.total_floats(); ++i)
      ASSERT_LE(std::abs(loaded.host_weights()[i] - original.host_weights()[i]),
                relative * std::abs(original.host_weights()[i]) + absolute) << i;
  }
}

TEST(HfFormat, RefusesModelsWithoutAHuggingFaceClass) {
  TempDir dir;
  const Model v2 = random_model(tiny_config(AttentionKind::diff2, 2, 1, RopeStyle::half), 1);
  EXPECT_THROW(save_hf_model(v2, dir.path(), StoredFloat::f32), Error);
  ModelConfig c = tiny_config(AttentionKind::diff, 2, 1, RopeStyle::half);
  c.lambda_init_constant = 0.5;
  EXPECT_THROW(save_hf_model(random_model(c, 1), dir.path(), StoredFloat::f32), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "model.safetensors"));
}

// Sharded weights: model.safetensors.index.json over several files.
class Sharded : public ::testing::Test {
 protected:
  void SetUp() override {
    const Model m = random_model(tiny_config(AttentionKind::baseline, 4, 2, RopeStyle::half), 5);
    save_hf_model(m, single.path(), StoredFloat::f32);
    config = io::read_json_file(single / "config.json");
    const io::SafetensorsReader reader(single / "model.safetensors");
    for (const std::string& name : reader.names()) {
      const bool first = name.find("layers.1") == std::string::npos;
      tensors[first ? 0 : 1][name] = reader.read_f32(name);
      shapes[name] = reader.info(name).shape;
    }
  }
  // Writes the shards (with `extra` added to shard 1) and an index mapping `index`.
  void write(const std::filesystem::path& dir, const json& index, const std::string& extra = "") {
    io::write_json_file(dir / "config.json", config);
    for (int s = 0; s < 2; ++s) {
      std::vector<io::SafetensorsEntry> entries;
      for (const auto& [name, data] : tensors[s]) entries.push_back({name, shapes[name], std::span<const float>(data)});
      if (s == 1 && !extra.empty()) entries.push_back({extra, shapes["model.norm.weight"], std::span<const float>(tensors[0]["model.norm.weight"])});
      io::write_safetensors(dir / ("model-0000" + std::to_string(s + 1) + "-of-00002.safetensors"), entries);
    }
    io::write_json_file(dir / "model.safetensors.index.json",
                        json{{"metadata", json::object()}, {"weight_map", index}});
  }
  json good_index() {
    json map = json::object();
    for (int s = 0; s < 2; ++s)
      for (const auto& [name, data] : tensors[s]) map[name] = "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
    return map;
  }
  std::string error_loading(const std::filesystem::path& dir) {
    try {
      load_model_dir(dir);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  TempDir single;
  json config;
  std::map<std::string, std::vector<float>> tensors[2];
  std::map<std::string, std::vector<int64_t>> shapes;
};

TEST_F(Sharded, LoadsTheSameWeightsAsOneFile) {
  TempDir dir;
  write(dir.path(), good_index());
  const Model a = load_model_dir(single.path()), b = load_model_dir(dir.path());
  EXPECT_EQ(0, std::memcmp(a.host_weights(), b.host_weights(), sizeof(float) * a.table.total_floats()));
}

TEST_F(Sharded, HostileIndexesAreErrorsNamingTheTensorOrFile) {
  {
    TempDir dir;
    json index = good_index();
    index["model.norm.weight"] = "model-00003-of-00002.safetensors";
    write(dir.path(), index);
    EXPECT_NE(error_loading(dir.path()).find("model-00003-of-00002.safetensors' (holding 'model.norm.weight') does not exist"),
              std::string::npos) << error_loading(dir.path());
  }
  {
    TempDir dir;
    json index = good_index();
    index["model.norm.weight"] = "../model-00001-of-00002.safetensors";
    write(dir.path(), index);
    EXPECT_NE(error_loading(dir.path()).find("not a plain file name"), std::string::npos);
  }
  {
    TempDir dir;
    json index = good_index();
    // "\u0000" in the index: opened, the name would end there, at the shard that holds the tensor
    index["model.norm.weight"] = std::string("model-00001-of-00002.safetensors\0junk", 37);
    write(dir.path(), index);
    const std::string e = error_loading(dir.path());
    EXPECT_NE(e.find(R"(shard "model-00001-of-00002.safetensors\u0000junk" is not a plain file name)"), std::string::npos)
        << e;
  }
  {
    TempDir dir;
    json index = good_index();
    index["model.norm.weight"] = "model-00002-of-00002.safetensors";  // it is in shard 1
    write(dir.path(), index);
    const std::string e = error_loading(dir.path());
    EXPECT_NE(e.find("'model.norm.weight' is listed"), std::string::npos) << e;
  }
  {
    TempDir dir;
    write(dir.path(), good_index(), "model.extra.weight");
    const std::string e = error_loading(dir.path());
    EXPECT_NE(e.find("'model.extra.weight' is not listed"), std::string::npos) << e;
  }
  {
    TempDir dir;
    json index = good_index();
    index.erase("model.norm.weight");
    write(dir.path(), index);
    const std::string e = error_loading(dir.path());
    EXPECT_NE(e.find("'model.norm.weight' is not listed"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace difftx::model
