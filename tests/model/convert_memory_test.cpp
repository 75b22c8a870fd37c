// Conversion streams (docs/FORMATS.md "Streaming conversion"): converting a model whose weights
// take 208 MiB in F32 (54.5M parameters in 16 layers, stored BF16) grows the resident set by a
// few tensors (the largest, the 4096 x 512 embedding, is 8 MiB in F32; about 15 MiB seen), not
// by the model. Each
// conversion's peak growth (Linux VmHWM, in a forked child: support/peak_memory.h) is compared
// with what loading the model grows by, which the in-memory conversion this replaced needed and
// more: a conversion that holds the model again fails the bound of a quarter of that.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_trainer.h"
#include "io/io_test_files.h"
#include "model/formats/difftx_format.h"
#include "model/formats/gguf_format.h"
#include "model/formats/hf_format.h"
#include "model/model_io.h"
#include "model/storage_plan.h"
#include "support/peak_memory.h"

namespace difftx::model {
namespace {

ModelConfig large_config() {
  ModelConfig c;
  c.attention = kernels::AttentionKind::baseline;
  c.vocab_size = 4096;
  c.hidden_size = 512;
  c.num_hidden_layers = 16;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 4;
  c.head_dim = 64;
  c.intermediate_size = 1536;
  c.max_position_embeddings = 128;
  c.tie_word_embeddings = false;
  c.rope_style = kernels::RopeStyle::half;
  c.validate();
  return c;
}

data::Tokenizer small_tokenizer() {
  std::vector<std::string> docs;
  for (int i = 0; i < 24; ++i) docs.push_back("the whale and the sea, document " + std::to_string(i) + " of many");
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  return data::train_bpe(views, {.vocab_size = 300});
}

TEST(ConvertMemory, ConversionHoldsAFewTensorsNotTheModel) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan build: shadow memory and quarantine make resident-set peaks meaningless here";
#endif
  const ModelConfig c = large_config();
  testing::TempDir dir;
  const auto source = dir / "source";
  // Written in a child of its own: the parent runs no OpenMP before forking the measurements.
  testing::peak_growth_kib_in_child([&](const std::function<void()>& mark) {
    Model model(c);
    init_parameters(c, model.table, model.host_weights(), 5);
    save_difftx_model(model, source, io::StoredFloat::bf16);
    mark();
  });
  const double model_mib = ParameterTable(c).total_floats() * 4.0 / (1 << 20);

  const int64_t load = testing::peak_growth_kib_in_child([&](const std::function<void()>& mark) {
    mark();
    const Model model = load_model_dir(source);
    if (model.table.total_floats() == 0) throw std::runtime_error("nothing loaded");
  });
  std::printf("  F32 weights %.0f MiB; load_model_dir grows by %.1f MiB\n", model_mib, load / 1024.0);
  EXPECT_GT(load, static_cast<int64_t>(model_mib * 1024 * 0.9)) << "the measurement does not see the loaded model";

  const struct {
    const char* name;
    std::function<void(const WeightSource&, const std::filesystem::path&, const data::Tokenizer&)> convert;
  } cases[] = {
      {"difftx f32", [](const WeightSource& s, const auto& out, const auto&) { save_difftx_model(s, {}, out); }},
      {"difftx q4_0", [](const WeightSource& s, const auto& out, const auto&) {
         save_difftx_model(s, storage_plan(s.config(), kernels::WeightType::q4_0), out);
       }},
      {"hf bf16", [](const WeightSource& s, const auto& out, const auto&) { save_hf_model(s, out, io::StoredFloat::bf16); }},
      {"gguf q4_0", [](const WeightSource& s, const auto& out, const data::Tokenizer& tok) {
         std::filesystem::create_directories(out);
         save_gguf_model(s, tok, kernels::WeightType::q4_0, out / kGgufFile);
       }},
  };
  for (const auto& k : cases) {
    const auto out = dir / (std::string("out_") + std::to_string(&k - cases));
    const int64_t growth = testing::peak_growth_kib_in_child([&](const std::function<void()>& mark) {
      const data::Tokenizer tok = small_tokenizer();
      mark();
      k.convert(*open_model_dir(source), out, tok);
    });
    std::printf("  %-12s conversion grows by %.1f MiB\n", k.name, growth / 1024.0);
    EXPECT_LT(growth, load / 4) << k.name << ": the conversion holds a large part of the model";
    std::filesystem::remove_all(out);
  }
}

}  // namespace
}  // namespace difftx::model
