// Models whose matrices are held in an inference storage type (model/storage_plan.h,
// model/formats/stored_matrices.h): the storage plan's rules, the forward pass and the decode
// step against the same model widened to F32 (the reference twin: every weight dequantized),
// and the file round trip, as stored and widened. The matmul kernels themselves are tested
// against their reference in tests/kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "core/error.h"
#include "support/backend_case.h"
#include "support/engine_runs.h"
#include "io/io_test_files.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "model/finite_weights.h"
#include "model/formats/difftx_format.h"
#include "model/model_io.h"
#include "model/storage_plan.h"
#include "support/random_model.h"
#include "support/testing.h"

#include "source_dir.h"

namespace difftx::model {

using io::SafetensorsEntry;
using kernels::AttentionKind;
using kernels::WeightType;

namespace {

using testing::TempDir;

// Rows of 256 weights: every type's blocks fit (Q4_K's are 256 long).
ModelConfig packable_config(AttentionKind kind) {
  ModelConfig c;
  c.attention = kind;
  c.vocab_size = 96;
  c.hidden_size = 256;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 32;
  c.intermediate_size = 256;
  c.max_position_embeddings = 64;
  c.tie_word_embeddings = kind != AttentionKind::baseline;  // both kinds of head
  c.validate();
  return c;
}

std::vector<float> all_logits(const Model& model, const std::vector<int32_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  Activations acts(model.config, 1, T);
  std::vector<float> out(T * model.config.vocab_size);
  decoder_logits(model, acts, tokens.data(), out.data());
  return out;
}

double max_abs(const std::vector<float>& x) {
  double m = 0;
  for (float v : x) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

// Largest difference relative to the reference's largest magnitude.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  return testing::max_abs_diff(got, want) / max_abs(want);
}

const std::vector<int32_t> kTokens = {5, 17, 3, 88, 42, 9, 61, 70, 2, 33, 11, 95};

TEST(StoragePlan, TypesFollowTheRules) {
  const ModelConfig c = packable_config(AttentionKind::diff2);
  const MatrixTypes q4 = storage_plan(c, WeightType::q4_0);
  EXPECT_EQ(q4.at("model.embed_tokens.weight"), WeightType::q8_0);  // 4-bit: the head in q8_0
  EXPECT_EQ(q4.at("model.layers.1.mlp.down_proj.weight"), WeightType::q4_0);
  EXPECT_EQ(q4.count("model.layers.0.self_attn.lambda_proj.weight"), 0u);  // always F32
  EXPECT_EQ(q4.count("model.layers.0.input_layernorm.weight"), 0u);
  EXPECT_TRUE(storage_plan(c, WeightType::f32).empty());
  EXPECT_EQ(storage_plan(c, WeightType::q8_0).at("model.embed_tokens.weight"), WeightType::q8_0);
  // --head-dtype: the embedding and LM head in their own type, even with F32 matrices.
  EXPECT_EQ(storage_plan(c, WeightType::q4_0, WeightType::q4_0).at("model.embed_tokens.weight"), WeightType::q4_0);
  const MatrixTypes head_only = storage_plan(c, WeightType::f32, WeightType::bf16);
  EXPECT_EQ(head_only.size(), 1u);  // tied: the embedding is the head
  EXPECT_EQ(head_only.at("model.embed_tokens.weight"), WeightType::bf16);
  // D = 32: rows are whole Q8_0 blocks but not Q4_K's 256, which fall back to bf16.
  const ModelConfig small = testing::small_config(AttentionKind::baseline, {});
  const MatrixTypes k = storage_plan(small, WeightType::q4_k);
  EXPECT_EQ(k.at("model.layers.0.self_attn.q_proj.weight"), WeightType::bf16);
  EXPECT_EQ(k.at("model.embed_tokens.weight"), WeightType::q8_0);
}

TEST(StoragePlan, TableRefusesTypesForVectorsAndUnknownNames) {
  const ModelConfig c = packable_config(AttentionKind::diff2);
  EXPECT_NE(testing::error_of([&] { ParameterTable(c, {{"model.norm.weight", WeightType::bf16}}); })
                .find("always F32"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { ParameterTable(c, {{"model.layers.0.self_attn.lambda_proj.weight", WeightType::q8_0}}); })
                .find("always F32"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { ParameterTable(c, {{"model.layers.9.mlp.up_proj.weight", WeightType::q8_0}}); })
                .find("no matrix of that name"), std::string::npos);
  const ModelConfig small = testing::small_config(AttentionKind::baseline, {});
  EXPECT_NE(testing::error_of([&] { ParameterTable(small, {{"model.layers.0.mlp.up_proj.weight", WeightType::q4_k}}); })
                .find("256-weight blocks"), std::string::npos);
}

struct Case {
  AttentionKind kind;
  WeightType type;
  double tolerance;  // of the logits, relative to their largest magnitude
};

class PackedModel : public ::testing::TestWithParam<Case> {};

// The packed model against its reference twin: the same model with every weight dequantized to
// F32. BF16/F16 differ only in summation order. The block types' GEMM (and Q4's GEMV) also round
// the activations to int8 per 32-block (kernels/quant/matmul.h), which moves the logits of these
// sharpened random models by up to 2-7% of their largest magnitude (seen: q8_0 2.1%, q4_0 3.3%,
// q4_k 7.1%); a matrix bound in the wrong place moves them by far more than 10%.
TEST_P(PackedModel, ForwardAndDecodeMatchTheWidenedModel) {
  const Case k = GetParam();
  const Model source = testing::random_model(packable_config(k.kind), 7, 2.0f);
  const Model packed = convert_matrices(source, storage_plan(source.config, k.type));
  const Model widened = convert_matrices(packed, {});
  ASSERT_FALSE(packed.table.all_f32());
  ASSERT_TRUE(widened.table.all_f32());
  EXPECT_LT(packed.weight_bytes(), source.weight_bytes());

  const std::vector<float> want = all_logits(widened, kTokens);
  const std::vector<float> got = all_logits(packed, kTokens);
  EXPECT_LT(relative_error(got, want), k.tolerance);
  // The widened twin is not the source: the quantization changed the weights.
  if (k.type != WeightType::f16) {
    EXPECT_GT(relative_error(all_logits(source, kTokens), want), 1e-6);
  }

  // Prefill the first half, decode the rest one token at a time: every step's logits match the
  // reference's at that position.
  const int64_t V = source.config.vocab_size, half = 6;
  const std::vector<float> logits =
      testing::engine_logits(packed, std::span(kTokens).first(half), std::span(kTokens).subspan(half));
  for (size_t t = half; t <= kTokens.size(); ++t) {
    const std::vector<float> step(logits.begin() + (t - half) * V, logits.begin() + (t - half + 1) * V),
        ref(want.begin() + (t - 1) * V, want.begin() + t * V);
    EXPECT_LT(relative_error(step, ref), k.tolerance) << "position " << t - 1;
  }
}

TEST_P(PackedModel, FileRoundTripKeepsTheBytesAndWidensExactly) {
  const Case k = GetParam();
  const Model packed = convert_matrices(testing::random_model(packable_config(k.kind), 3), storage_plan(packable_config(k.kind), k.type));
  TempDir dir;
  save_difftx_model(packed, dir.path());
  const Model stored = load_model_dir(dir.path(), MatrixPrecision::as_stored);
  ASSERT_EQ(stored.table.packed_bytes(), packed.table.packed_bytes());
  for (const ParamInfo& p : stored.table.params()) EXPECT_EQ(p.type, packed.table.find(p.name)->type) << p.name;
  EXPECT_EQ(std::memcmp(stored.host_packed(), packed.host_packed(), packed.table.packed_bytes()), 0);
  EXPECT_EQ(std::memcmp(stored.host_weights(), packed.host_weights(), sizeof(float) * packed.table.total_floats()), 0);

  const Model widened = load_model_dir(dir.path());  // MatrixPrecision::f32
  ASSERT_TRUE(widened.table.all_f32());
  const Model twin = convert_matrices(packed, {});
  EXPECT_EQ(std::memcmp(widened.host_weights(), twin.host_weights(), sizeof(float) * twin.table.total_floats()), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Types, PackedModel,
    ::testing::Values(Case{AttentionKind::baseline, WeightType::bf16, 1e-5}, Case{AttentionKind::diff, WeightType::f16, 1e-5},
                      Case{AttentionKind::baseline, WeightType::q8_0, 0.1}, Case{AttentionKind::diff, WeightType::q8_0, 0.1},
                      Case{AttentionKind::diff2, WeightType::q8_0, 0.1}, Case{AttentionKind::baseline, WeightType::q4_0, 0.1},
                      Case{AttentionKind::diff, WeightType::q4_k, 0.1}, Case{AttentionKind::diff2, WeightType::q4_k, 0.1}),
    [](const auto& info) {
      return std::string(kernels::attention_kind_name(info.param.kind)) + "_" +
             kernels::weight_type_name(info.param.type);
    });

TEST(PackedModelTraining, NeedsF32Weights) {
  const Model packed = convert_matrices(testing::random_model(packable_config(AttentionKind::baseline), 1),
                                        storage_plan(packable_config(AttentionKind::baseline), WeightType::q8_0));
  Activations acts(packed.config, 1, 4);
  std::vector<float> grads(packed.table.total_floats());
  ModelTensors g = bind_tensors(packed.config, packed.table, testing::host_ptr(grads.data()));
  const std::vector<int32_t> x = {1, 2, 3, 4};
  EXPECT_NE(testing::error_of([&] { decoder_forward_backward(packed, acts, x.data(), x.data(), g); })
                .find("needs F32 weights"), std::string::npos);
}

// Hugging Face directories stored in BF16/F16 load as stored with the same rows as widened (the
// DiffLlama row maps move whole rows of any type).
TEST(PackedModelHf, StoredLoadEqualsWidenedLoad) {
  const std::filesystem::path fixtures = std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf";
  for (const char* name : {"diffllama_gqa4_bf16_llama3", "diffllama_kv1_f16_sharded", "llama_gqa4_f16_llama3_sharded"}) {
    const Model stored = load_model_dir(fixtures / name, MatrixPrecision::as_stored);
    const Model widened = load_model_dir(fixtures / name);
    EXPECT_FALSE(stored.table.all_f32()) << name;
    for (const ParamInfo& p : stored.table.params()) {
      const std::vector<float> w = widened_weight(stored, p);
      const ParamInfo& q = *widened.table.find(p.name);
      EXPECT_TRUE(std::equal(w.begin(), w.end(), widened.host_weights() + q.offset)) << name << " " << p.name;
    }
    EXPECT_LT(relative_error(all_logits(stored, {1, 2, 3, 4, 5, 6, 7, 8, 9}), all_logits(widened, {1, 2, 3, 4, 5, 6, 7, 8, 9})),
              1e-5) << name;
  }
}

// A file of packed matrices, then one thing in it broken.
class PackedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    save_difftx_model(convert_matrices(testing::random_model(packable_config(AttentionKind::baseline), 2),
                                       storage_plan(packable_config(AttentionKind::baseline), WeightType::q8_0)),
                      dir.path());
  }
  // Rewrites model.safetensors with tensor `name`'s entry and the metadata changed by `edit`.
  void rewrite(const std::string& name, const std::function<void(SafetensorsEntry&, std::map<std::string, std::string>&)>& edit) {
    const io::SafetensorsReader reader(dir / "model.safetensors");
    std::map<std::string, std::string> metadata = reader.metadata();
    std::vector<std::vector<unsigned char>> bytes;
    std::vector<SafetensorsEntry> entries;
    for (const std::string& n : reader.names()) {
      const io::SafetensorsTensorInfo& info = reader.info(n);
      bytes.emplace_back(info.data_end - info.data_begin);
      reader.read_bytes(n, bytes.back());
      entries.push_back({n, info.shape, io::StoredBytes{info.dtype == "F32" ? "U8" : info.dtype, bytes.back()}});
      if (info.dtype == "F32") {  // F32 tensors go back as floats
        entries.back().data = std::span<const float>(reinterpret_cast<const float*>(bytes.back().data()), bytes.back().size() / 4);
      }
    }
    for (auto& e : entries)
      if (e.name == name) edit(e, metadata);
    io::write_safetensors(dir / "model.safetensors", entries, metadata);
  }
  std::string load_error() {
    return testing::error_of([&] { load_model_dir(dir.path(), MatrixPrecision::as_stored); });
  }
  TempDir dir;
};

constexpr const char* kUp = "model.layers.0.mlp.up_proj.weight";

TEST_F(PackedFile, U8WithoutItsTypeIsRefused) {
  rewrite(kUp, [](SafetensorsEntry&, std::map<std::string, std::string>& m) { m.erase(std::string(kWeightTypeKeyPrefix) + kUp); });
  EXPECT_NE(load_error().find("no \"difftx.weight_type.model.layers.0.mlp.up_proj.weight\" entry"), std::string::npos)
      << load_error();
}

TEST_F(PackedFile, U8NamingAFloatTypeIsRefused) {
  rewrite(kUp, [](SafetensorsEntry&, std::map<std::string, std::string>& m) { m[std::string(kWeightTypeKeyPrefix) + kUp] = "bf16"; });
  EXPECT_NE(load_error().find("not a block type"), std::string::npos) << load_error();
}

TEST_F(PackedFile, AnUnknownWeightTypeNamesTheTensor) {
  rewrite(kUp, [](SafetensorsEntry&, std::map<std::string, std::string>& m) { m[std::string(kWeightTypeKeyPrefix) + kUp] = "q9_9"; });
  EXPECT_NE(load_error().find("model.safetensors: tensor 'model.layers.0.mlp.up_proj.weight': weight type 'q9_9'"),
            std::string::npos) << load_error();
}

TEST_F(PackedFile, RowsOfPartBlocksAreRefused) {
  rewrite(kUp, [](SafetensorsEntry& e, std::map<std::string, std::string>&) {
    auto& b = std::get<io::StoredBytes>(e.data);
    e.shape = {e.shape[0] * e.shape[1] / 17, 17};  // 17-byte rows: not whole 34-byte Q8_0 blocks
    b.bytes = b.bytes.first(e.shape[0] * 17);
  });
  EXPECT_NE(load_error().find("not a whole number of 34-byte blocks"), std::string::npos) << load_error();
}

TEST_F(PackedFile, ANonFiniteBlockScaleIsRefused) {
  rewrite(kUp, [](SafetensorsEntry& e, std::map<std::string, std::string>&) {
    auto& b = std::get<io::StoredBytes>(e.data);
    auto* first = const_cast<unsigned char*>(b.bytes.data());
    first[34 * 3] = 0x00;  // the fourth block's F16 scale: NaN (0x7e00)
    first[34 * 3 + 1] = 0x7e;
  });
  EXPECT_NE(load_error().find("'model.layers.0.mlp.up_proj.weight' holds a non-finite value"), std::string::npos)
      << load_error();
}

}  // namespace
}  // namespace difftx::model
