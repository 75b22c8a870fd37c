// `difftx convert` on Phi-4-mini-flash (the SambaY hybrid; docs/FORMATS.md "Phi-4-mini-flash"):
// every fixture under tests/fixtures/phi4flash (F32 and BF16 with A_log, D and the lambdas F32;
// sharded; tied and untied; pair-GQA; a config without the Mamba keys) goes to difftx's format
// and back to Phi4Flash's, and straight to Phi4Flash's, giving the input's tensors bit for bit
// under the same names, dtypes and shapes and a config.json with the input's keys. The difftx
// directory gives the original's logits bit for bit at F32 and BF16, and at the block types the
// logits of the original converted in memory by the same storage plan; its vectors stay F32.
// Refused by name: GGUF, a hybrid that is not SambaY, a malformed `hybrid` object.
#include <gtest/gtest.h>
#include "source_dir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/json_file.h"
#include "io/npy.h"
#include "io/safetensors_set.h"
#include "model/formats/hf_config.h"
#include "model/formats/phi4flash_config.h"
#include "model/formats/stored_matrices.h"
#include "model/hybrid_decoder.h"
#include "model/model_io.h"
#include "model/model_output.h"
#include "model/storage_plan.h"
#include "support/fixture_dirs.h"
#include "support/testing.h"

namespace difftx::model {

using kernels::WeightType;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

const fs::path kPhi4FlashFixtures = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/phi4flash";

std::vector<std::string> case_names() { return testing::subdirectory_names(kPhi4FlashFixtures); }

// The fixture's float type as `--dtype` spells it.
std::string float_type_of(const fs::path& dir) {
  return io::read_json_file(dir / "config.json").at("torch_dtype") == json("bfloat16") ? "bf16" : "f32";
}

void convert(const fs::path& in, const fs::path& out, const std::string& format, const std::string& dtype) {
  convert_model(in, model_output(out, format, dtype, std::nullopt, OptionSpelling::field));
}

// The same tensor names, and each with the same dtype, shape and bytes.
void expect_same_tensors(const fs::path& want_dir, const fs::path& got_dir) {
  const io::SafetensorsSet want(want_dir), got(got_dir);
  ASSERT_EQ(got.names(), want.names()) << got_dir;
  for (const std::string& name : want.names()) {
    const io::SafetensorsTensorInfo &a = want.info(name), &b = got.info(name);
    EXPECT_EQ(b.dtype, a.dtype) << name;
    EXPECT_EQ(b.shape, a.shape) << name;
    if (b.dtype != a.dtype || b.shape != a.shape) continue;
    std::vector<unsigned char> x(a.data_end - a.data_begin), y(b.data_end - b.data_begin);
    want.read_bytes(name, x);
    got.read_bytes(name, y);
    EXPECT_TRUE(x == y) << name << " differs in its bits";
  }
}

// config.json written as Phi4Flash: every key the input had with its value (transformers_version
// aside: difftx is not transformers), and the config difftx reads from it the input's.
void expect_same_config(const fs::path& want_dir, const fs::path& got_dir) {
  const json want = io::read_json_file(want_dir / "config.json"), got = io::read_json_file(got_dir / "config.json");
  for (const auto& [key, value] : want.items()) {
    if (key == "transformers_version") continue;
    ASSERT_TRUE(got.contains(key)) << key << " is missing from " << got_dir;
    EXPECT_EQ(got.at(key), value) << key;
  }
  EXPECT_EQ(config_to_json(config_from_phi4flash(got, "got")), config_to_json(config_from_phi4flash(want, "want")));
}

std::vector<float> logits_of(const Model& model, const fs::path& fixture, int64_t* rows = nullptr) {
  const io::NpyArray<int64_t> tokens = io::read_npy_i64(fixture / "tokens.npy");
  const int64_t B = tokens.shape[0], T = tokens.shape[1];
  const std::vector<int32_t> ids(tokens.data.begin(), tokens.data.end());
  HybridActivations acts(model.config, B, T, *model.backend);
  std::vector<float> logits(B * T * model.config.vocab_size);
  hybrid_logits(model, acts, ids.data(), logits.data());
  if (rows) *rows = B * T;
  return logits;
}

class Phi4FlashConvert : public ::testing::TestWithParam<std::string> {};

TEST_P(Phi4FlashConvert, ThroughDifftxAndBackIsLossless) {
  const fs::path in = kPhi4FlashFixtures / GetParam();
  const std::string dtype = float_type_of(in);
  TempDir tmp;
  convert(in, tmp / "difftx", "difftx", dtype);
  EXPECT_EQ(io::read_json_file(tmp / "difftx" / "config.json").at("model_type"), json("difftx"));
  convert(tmp / "difftx", tmp / "hf", "hf", dtype);
  expect_same_tensors(in, tmp / "hf");
  expect_same_config(in, tmp / "hf");
  convert(in, tmp / "direct", "hf", dtype);  // Hugging Face to Hugging Face
  expect_same_tensors(in, tmp / "direct");
  expect_same_config(in, tmp / "direct");
  // difftx's config reads back as the input's
  EXPECT_EQ(config_to_json(open_model_dir(tmp / "difftx")->config()), config_to_json(open_model_dir(in)->config()));
  if (dtype == "f32") {  // narrowed once, through difftx's bf16 or straight: the same tensors
    convert(in, tmp / "difftx_bf16", "difftx", "bf16");
    convert(tmp / "difftx_bf16", tmp / "hf_bf16", "hf", "bf16");
    convert(in, tmp / "direct_bf16", "hf", "bf16");
    expect_same_tensors(tmp / "direct_bf16", tmp / "hf_bf16");
  }
}

TEST_P(Phi4FlashConvert, DifftxDirectoryGivesTheOriginalsLogits) {
  const fs::path in = kPhi4FlashFixtures / GetParam();
  TempDir tmp;
  const std::vector<float> want = logits_of(load_model_dir(in), in);
  convert(in, tmp / "f32", "difftx", "f32");
  EXPECT_TRUE(logits_of(load_model_dir(tmp / "f32"), in) == want) << "F32: not bit-identical";
  // Each other type: the difftx directory loaded as stored gives what the original converted in
  // memory by the same storage plan gives, bit for bit; and stays within the type's error of the
  // F32 logits, as a fraction of the largest |logit| (3.4 to 5.4 here). Measured on these random
  // 4- to 12-layer models: bf16 up to 0.04, q8_0 (int8 activations too) up to 0.06, q4_0 up to 0.33.
  const Model original = load_model_dir(in);
  const struct {
    const char* name;
    WeightType type;
    double rtol;
  } types[] = {{"bf16", WeightType::bf16, 0.08}, {"q8_0", WeightType::q8_0, 0.08}, {"q4_0", WeightType::q4_0, 0.4},
               {"q4_k", WeightType::q4_k, 0.4}};
  double scale = 0;
  for (float x : want) scale = std::max(scale, static_cast<double>(std::abs(x)));
  for (const auto& t : types) {
    const fs::path dir = tmp / t.name;
    convert(in, dir, "difftx", t.name);
    const MatrixTypes plan = storage_plan(original.config, t.type);
    const io::SafetensorsSet file(dir);
    for (const ParamInfo& p : original.table.params()) {
      const auto planned = plan.find(p.name);
      EXPECT_EQ(stored_weight_type(file, p.name), planned == plan.end() ? WeightType::f32 : planned->second)
          << t.name << " " << p.name;
      if (!p.is_matrix()) {
        EXPECT_EQ(file.info(p.name).dtype, "F32") << "a vector is not F32: " << p.name;
      }
    }
    const std::vector<float> got = logits_of(load_model_dir(dir, MatrixPrecision::as_stored), in);
    EXPECT_TRUE(got == logits_of(convert_matrices(original, plan), in)) << t.name << ": not the in-memory plan's";
    const double err = testing::max_abs_diff(got, want) / scale;
    std::printf("  %-36s %-5s logits max|err| vs f32 / max|logit| %.3g\n", GetParam().c_str(), t.name, err);
    EXPECT_LE(err, t.rtol) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Phi4Flash, Phi4FlashConvert, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(Phi4FlashConvertFiles, TokenizerTemplateAndTokenIdsTravel) {
  TempDir tmp;
  const fs::path in = tmp / "in";
  fs::copy(kPhi4FlashFixtures / "phi4flash_l8_mha_f32", in);
  const fs::path tokenizer = testing::fixture_path("hf/motif_r1_mha_tied_f32_tokenizer/tokenizer.json");
  fs::copy_file(tokenizer, in / "tokenizer.json");
  testing::write_bytes(in / "tokenizer_config.json", R"({"eos_token": "<|im_end|>", "bos_token": null})");
  testing::write_bytes(in / "chat_template.jinja", "{%- for m in messages -%}{{ m['content'] }}{%- endfor -%}");
  convert(in, tmp / "difftx", "difftx", "f32");
  convert(tmp / "difftx", tmp / "hf", "hf", "f32");
  for (const fs::path& out : {tmp / "difftx", tmp / "hf"}) {
    for (const char* name : {"tokenizer.json", "tokenizer_config.json", "chat_template.jinja"}) {
      ASSERT_TRUE(fs::exists(out / name)) << out / name;
      EXPECT_EQ(io::read_whole_file(out / name), io::read_whole_file(in / name)) << out / name;
    }
    const json config = io::read_json_file(out / "config.json");
    for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) EXPECT_EQ(config.at(key), json(47)) << key;
  }
}

TEST(Phi4FlashConvertFiles, TypesAsTheOptionsSay) {
  const fs::path in = kPhi4FlashFixtures / "phi4flash_l8_untied_f32_sharded";
  const ModelConfig c = open_model_dir(in)->config();
  TempDir tmp;
  // --head-dtype: the embedding and the head in their own type, the rest as the plan says
  convert_model(in, model_output(tmp / "head", "difftx", "q4_0", "f16", OptionSpelling::field));
  const io::SafetensorsSet head(tmp / "head");
  for (const auto& [name, type] : storage_plan(c, WeightType::q4_0, WeightType::f16))
    EXPECT_EQ(stored_weight_type(head, name), type) << name;
  EXPECT_EQ(stored_weight_type(head, "model.embed_tokens.weight"), WeightType::f16);
  EXPECT_EQ(stored_weight_type(head, "lm_head.weight"), WeightType::f16);
  EXPECT_EQ(stored_weight_type(head, "model.layers.0.attn.out_proj.weight"), WeightType::q4_0);  // [16, 32]
  EXPECT_EQ(stored_weight_type(head, "model.layers.0.attn.dt_proj.weight"), WeightType::bf16);   // [32, 3]
  // Phi4Flash at f16: every tensor F16 but A_log, D and the lambdas
  convert(in, tmp / "f16", "hf", "f16");
  const io::SafetensorsSet f16(tmp / "f16");
  for (const std::string& name : f16.names())
    EXPECT_EQ(f16.info(name).dtype, phi4flash_keeps_f32(name) ? "F32" : "F16") << name;
  EXPECT_TRUE(phi4flash_keeps_f32("model.layers.1.attn.inner_cross_attn.lambda_q1"));
  EXPECT_TRUE(phi4flash_keeps_f32("model.layers.0.attn.A_log"));
  EXPECT_FALSE(phi4flash_keeps_f32("model.layers.0.attn.dt_proj.bias"));
  EXPECT_EQ(io::read_json_file(tmp / "f16" / "config.json").at("torch_dtype"), json("float16"));
}

TEST(Phi4FlashConvertFiles, SaveModelDirWritesAHybridThatLoadsBack) {
  const Model model = load_model_dir(kPhi4FlashFixtures / "phi4flash_l4_window_over_t_f32");
  TempDir tmp;
  save_model_dir(model, tmp / "out");
  const Model back = load_model_dir(tmp / "out");
  ASSERT_TRUE(back.config.hybrid);
  EXPECT_EQ(config_to_json(back.config), config_to_json(model.config));
  ASSERT_EQ(back.table.total_floats(), model.table.total_floats());
  EXPECT_TRUE(std::equal(model.host_weights(), model.host_weights() + model.table.total_floats(), back.host_weights()));
}

TEST(Phi4FlashConvertRefusals, GgufByName) {
  TempDir tmp;
  const std::string message = testing::error_of(
      [&] { convert(kPhi4FlashFixtures / "phi4flash_l8_mha_f32", tmp / "gguf", "gguf", "q8_0"); });
  EXPECT_NE(message.find("phi4flash"), std::string::npos) << message;
  EXPECT_NE(message.find("--to difftx"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(tmp / "gguf")) << "the refusal left an output directory";
}

TEST(Phi4FlashConvertRefusals, AHybridThatIsNotSambaY) {
  const ModelConfig good =
      config_from_phi4flash(io::read_json_file(kPhi4FlashFixtures / "phi4flash_l8_mha_f32/config.json"), "c");
  EXPECT_EQ(config_from_phi4flash(config_to_hf(good, "float32"), "back").hybrid->layers, good.hybrid->layers);
  ModelConfig layout = good;
  layout.hybrid->layers[0] = LayerKind::sliding_attention;  // a stack difftx runs, but not SambaY's
  layout.validate();
  testing::expect_error([&] { config_to_hf(layout, "float32"); }, "SambaY");
  ModelConfig eps = good;
  eps.head_norm_eps = 1e-6;
  testing::expect_error([&] { config_to_hf(eps, "float32"); }, "1e-5");
  ModelConfig width = good;
  width.head_dim = 2;
  width.validate();
  testing::expect_error([&] { config_to_hf(width, "float32"); }, "head_dim");
}

TEST(Phi4FlashConvertRefusals, AMalformedHybridObjectByName) {
  const json good = config_to_json(config_from_phi4flash(
      io::read_json_file(kPhi4FlashFixtures / "phi4flash_l8_mha_f32/config.json"), "c"));
  EXPECT_EQ(config_to_json(config_from_json(good, "config.json")), good);
  const std::pair<std::function<void(json&)>, std::string> cases[] = {
      {[](json& j) { j["hybrid"]["window"] = 4; }, "unknown field 'window'"},
      {[](json& j) { j["hybrid"]["layers"][0] = "mamba2"; }, "layer 0"},
      {[](json& j) { j["hybrid"]["layers"].erase(0); }, "layer kinds for 8 layers"},
      {[](json& j) { j["hybrid"].erase("mamba"); }, "'mamba'"},
      {[](json& j) { j["hybrid"]["mamba"]["d_state"] = 0; }, "d_state"},
      {[](json& j) { j["hybrid"]["shared_kv_layer"] = "5"; }, "shared_kv_layer"},
      {[](json& j) { j["hybrid"] = 3; }, "'hybrid'"},
  };
  for (const auto& [edit, part] : cases) {
    json j = good;
    edit(j);
    const std::string message = testing::error_of([&] { config_from_json(j, "config.json"); });
    EXPECT_NE(message.find(part), std::string::npos) << j["hybrid"].dump() << " -> " << message;
    EXPECT_NE(message.find("config.json"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace difftx::model
