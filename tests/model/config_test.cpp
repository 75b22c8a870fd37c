#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx::model {
namespace {

using nlohmann::json;

json tiny(const char* attention) {
  return json{{"model_type", "difftx"}, {"attention", attention}, {"vocab_size", 61}, {"hidden_size", 32},
              {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
              {"head_dim", 8}};
}

std::string error_of(const json& j) {
  try {
    config_from_json(j, "cfg.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsFollowSpec) {
  const ModelConfig c = config_from_json(tiny("diff"), "cfg.json");
  EXPECT_EQ(c.intermediate_size, 128);  // 8/3 * 32 = 85.3 -> multiple of 64
  EXPECT_EQ(c.rope_style, kernels::RopeStyle::interleaved);
  EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
  EXPECT_TRUE(c.diff_subln);
  EXPECT_NEAR(c.lambda_init(0), 0.2, 1e-12);
  EXPECT_NEAR(c.lambda_init(1), 0.8 - 0.6 * std::exp(-0.3), 1e-12);
}

TEST(Config, RoundTripsThroughJson) {
  json j = tiny("diff2");
  j["lambda_init"] = 0.5;
  j["rope_style"] = "half";
  j["tie_word_embeddings"] = false;
  const ModelConfig a = config_from_json(j, "a");
  const ModelConfig b = config_from_json(config_to_json(a), "b");
  EXPECT_EQ(config_to_json(a), config_to_json(b));
  EXPECT_EQ(*b.lambda_init_constant, 0.5);
}

TEST(Config, ErrorsNameTheKey) {
  json unknown = tiny("diff");
  unknown["num_layers"] = 2;
  EXPECT_NE(error_of(unknown).find("unknown key 'num_layers'"), std::string::npos) << error_of(unknown);

  json missing = tiny("diff");
  missing.erase("vocab_size");
  EXPECT_NE(error_of(missing).find("missing key 'vocab_size'"), std::string::npos);

  json gqa = tiny("baseline");
  gqa["num_attention_heads"] = 3;
  gqa["num_key_value_heads"] = 2;
  EXPECT_NE(error_of(gqa).find("num_key_value_heads"), std::string::npos) << error_of(gqa);

  json variant = tiny("diff3");
  EXPECT_NE(error_of(variant).find("attention"), std::string::npos);

  json negative = tiny("diff");
  negative["hidden_size"] = -4;
  EXPECT_NE(error_of(negative).find("hidden_size"), std::string::npos);

  json bias = tiny("diff");
  bias["attention_bias"] = true;
  EXPECT_NE(error_of(bias).find("attention_bias"), std::string::npos);

  json lambda = tiny("diff");
  lambda["lambda_init"] = "linear";
  EXPECT_NE(error_of(lambda).find("lambda_init"), std::string::npos);
}

// The sizes default head_dim and intermediate_size are derived from are bounded first: the error
// names the bound and the file, with no overflow on the way.
TEST(Config, SizesAreBoundedBeforeDefaultsAreDerived) {
  json heads = tiny("diff");
  heads["num_attention_heads"] = int64_t{1} << 62;
  heads.erase("head_dim");
  EXPECT_EQ(error_of(heads),
            "cfg.json: config: 'num_attention_heads' is 4611686018427387904, above the largest supported 4096");
  json hidden = tiny("diff");
  hidden["hidden_size"] = int64_t{1} << 20;
  EXPECT_EQ(error_of(hidden), "cfg.json: config: 'hidden_size' is 1048576, above the largest supported 65536");
}

TEST(Config, AcceptsHarmlessKeysOtherToolsWrite) {
  json j = tiny("baseline");
  j["architectures"] = {"LlamaForCausalLM"};
  j["torch_dtype"] = "bfloat16";
  j["hidden_act"] = "silu";
  EXPECT_NO_THROW(config_from_json(j, "hf.json"));
}

TEST(Parameters, TableNamesAndCountsFollowSpec) {
  json j = tiny("diff");
  j["tie_word_embeddings"] = false;
  const ModelConfig c = config_from_json(j, "c");
  const ParameterTable table(c);
  for (const char* name : {"model.embed_tokens.weight", "model.layers.1.self_attn.lambda_q1",
                           "model.layers.0.self_attn.subln.weight", "model.norm.weight", "lm_head.weight"})
    EXPECT_NE(table.find(name), nullptr) << name;
  EXPECT_EQ(table.find("model.layers.0.self_attn.q_proj.weight")->shape, (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(table.find("model.layers.0.self_attn.v_proj.weight")->shape, (std::vector<int64_t>{16, 32}));
  int64_t sum = 0;
  for (const auto& p : table.params()) sum += p.numel;
  EXPECT_EQ(sum, c.total_parameters());
  EXPECT_FALSE(table.find("model.layers.0.self_attn.lambda_k2")->decay);
  EXPECT_TRUE(table.find("model.layers.0.mlp.up_proj.weight")->decay);
}

}  // namespace
}  // namespace difftx::model
