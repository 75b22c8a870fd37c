// Activation outliers (eval/outliers.h) against a brute-force twin that runs the model on each
// val sequence alone, computes every unmasked logit in double from the stored queries and keys
// (map pairing written out from docs/SPEC.md §2), gathers the layer outputs, and sorts. Counts must be
// equal; values agree to float rounding (the fast path's logits come from a float GEMM).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "data/loader.h"
#include "eval/outliers.h"
#include "model/decoder.h"
#include "support/testing.h"
#include "support/word_dataset.h"

namespace difftx::eval {
namespace {

struct Sorted {
  std::vector<double> values;  // descending |value|
  double median() const {
    const size_t n = values.size();
    return (values[n / 2] + values[(n - 1) / 2]) / 2;  // descending: the same two middle entries
  }
};

// Query and key columns of every softmax map (docs/SPEC.md §2.1-2.3).
std::vector<std::pair<int64_t, int64_t>> map_columns(const model::ModelConfig& c) {
  const int64_t H = c.num_attention_heads, Hkv = c.num_key_value_heads, d = c.head_dim;
  std::vector<std::pair<int64_t, int64_t>> cols;
  for (int64_t i = 0; i < H; ++i) {
    if (c.attention == kernels::AttentionKind::baseline) cols.push_back({i * d, i / (H / Hkv) * d});
    if (c.attention == kernels::AttentionKind::diff)
      for (int64_t s = 0; s < 2; ++s) cols.push_back({(2 * i + s) * d, (2 * (i / (H / Hkv)) + s) * d});
    if (c.attention == kernels::AttentionKind::diff2)
      for (int64_t s = 0; s < 2; ++s) cols.push_back({(2 * i + s) * d, (2 * i + s) / (2 * H / Hkv) * d});
  }
  return cols;
}

void check_variant(const nlohmann::json& j, const std::filesystem::path& data) {
  const model::ModelConfig c = model::config_from_json(j, "test");
  model::Model model(c);
  model::init_parameters(c, model.table, model.host_weights(), 12);
  for (int64_t i = 0; i < model.weight_floats(); ++i) model.host_weights()[i] *= 4.0f;
  const int64_t T = 16, sequences = 5, L = c.num_hidden_layers;
  const kernels::AttentionDims dims = c.attention_dims(1, T);

  Sorted logits, hidden;
  std::vector<double> layer_logits(L, 0), layer_hidden(L, 0);
  data::TokenLoader val(data, "val", {.batch = 1, .seq_len = T, .sampling = data::Sampling::sequential});
  std::vector<int32_t> in(T), tgt(T);
  model::Activations acts(c, 1, T);
  for (int64_t n = 0; n < sequences; ++n) {
    ASSERT_EQ(val.next(in.data(), tgt.data()), 1);
    model::decoder_forward(model, acts, in.data());
    for (int64_t l = 0; l < L; ++l) {
      const model::LayerActivations& s = acts.layers[l];
      for (const auto& [qc, kc] : map_columns(c))
        for (int64_t t = 0; t < T; ++t)
          for (int64_t u = 0; u <= t; ++u) {
            double dot = 0;
            for (int64_t x = 0; x < c.head_dim; ++x)
              dot += static_cast<double>(s.q.host()[t * dims.q_width() + qc + x]) * s.k.host()[u * dims.k_width() + kc + x];
            const double v = std::fabs(dot / std::sqrt(static_cast<double>(c.head_dim)));
            logits.values.push_back(v);
            layer_logits[l] = std::max(layer_logits[l], v);
          }
      const float* x = (l + 1 < L ? acts.layers[l + 1].x : acts.x_final).host();
      for (int64_t i = 0; i < T * c.hidden_size; ++i) {
        hidden.values.push_back(std::fabs(x[i]));
        layer_hidden[l] = std::max<double>(layer_hidden[l], std::fabs(x[i]));
      }
    }
  }
  for (Sorted* s : {&logits, &hidden}) std::sort(s->values.begin(), s->values.end(), std::greater<>());

  int calls = 0;
  OutlierOptions o;
  o.tokens = sequences * T - 3;  // rounds up to 5 sequences
  o.progress = [&](int, int64_t, int64_t) { ++calls; };
  // Batches of 2, 2 and 1 of a filled 2: the unused row must not count.
  data::TokenLoader pairs = data::sequential_loader(data, "val", 2, T);
  const OutlierResult r = measure_outliers(model, pairs, o);
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(r.sequences, sequences);
  EXPECT_EQ(r.tokens, sequences * T);
  auto expect_summary = [](const AbsSummary& got, const Sorted& want, const char* what) {
    SCOPED_TRACE(what);
    ASSERT_EQ(got.count, static_cast<int64_t>(want.values.size()));
    EXPECT_NEAR(got.top1, want.values[0], 1e-5 * want.values[0]);
    EXPECT_NEAR(got.top2, want.values[1], 1e-5 * want.values[1]);
    EXPECT_NEAR(got.top3, want.values[2], 1e-5 * want.values[2]);
    EXPECT_NEAR(got.median, want.median(), 1e-5 * want.median());
  };
  expect_summary(r.logits, logits, "attention logits");
  expect_summary(r.hidden, hidden, "hidden states");
  for (int64_t l = 0; l < L; ++l) {
    EXPECT_NEAR(r.layer_logits_top1[l], layer_logits[l], 1e-5 * layer_logits[l]);
    EXPECT_NEAR(r.layer_hidden_top1[l], layer_hidden[l], 1e-5 * layer_hidden[l]);
  }
}

TEST(Outliers, MatchABruteForceTwinForEveryVariant) {
  const testing::WordDataset ds;
  for (const char* attention : {"baseline", "diff", "diff2"}) {
    SCOPED_TRACE(attention);
    const nlohmann::json j = {{"model_type", "difftx"}, {"attention", attention}, {"vocab_size", 300},
                              {"hidden_size", 32},      {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                              {"num_key_value_heads", 2}, {"head_dim", 8},        {"intermediate_size", 48},
                              {"max_position_embeddings", 32}};
    check_variant(j, ds.data());
  }
}

TEST(Outliers, BadInputGetsClearErrors) {
  const testing::WordDataset ds;
  const nlohmann::json j = {{"model_type", "difftx"}, {"attention", "diff"}, {"vocab_size", 300},
                            {"hidden_size", 32},      {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                            {"head_dim", 8},          {"max_position_embeddings", 32}};
  const model::Model model(model::config_from_json(j, "test"));
  OutlierOptions o;
  data::TokenLoader too_long = data::sequential_loader(ds.data(), "val", 8, 64);
  EXPECT_NE(testing::error_of([&] { measure_outliers(model, too_long, o); }).find("exceeds the model's max_position_embeddings 32"),
            std::string::npos);
  data::TokenLoader val = data::sequential_loader(ds.data(), "val", 8, 16);
  o.tokens = 0;
  EXPECT_NE(testing::error_of([&] { measure_outliers(model, val, o); }).find("must be positive"), std::string::npos);
  o.tokens = 64;
  model::ModelConfig small = model.config;
  small.vocab_size = 100;  // the data's ids go past it
  EXPECT_NE(testing::error_of([&] { measure_outliers(model::Model(small), val, o); }).find("data and model do not belong together"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::eval
