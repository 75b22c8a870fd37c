// The analysis maps (eval/attention_maps.h) are the attention the model computes: applying each
// head row to the values reproduces the reference kernel's output for every variant and GQA
// ratio, and, on whole decoders, the attention output the forward pass stored. Row sums follow
// the normalisation the header states.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "eval/attention_maps.h"
#include "kernels/attention/attention_case.h"
#include "model/decoder.h"
#include "model/taps.h"

namespace difftx::eval {

using kernels::AttentionDims;
using kernels::AttentionKind;

namespace {

using testing::AttentionCase;

// out[b, t, head i] = sum_s head_row_i[s] * v[b, s, value head of i], value head i / (H / Hkv)
// (docs/SPEC.md §2.1-2.3, 2.5: for diff2 the pair (2i, 2i+1) reads kv head 2i / (2H / Hkv), the same
// one; for diff_grouped head i and its noise head read kv head (i / r) / (N / Hkv) = i / (H / Hkv)).
std::vector<float> apply_rows(const AttentionDims& dims, const float* q, const float* k, const float* v,
                              const float* lambda) {
  const int64_t dv = dims.variant().v1_layout() ? 2 * dims.d : dims.d, n_rep = dims.H / dims.Hkv;
  std::vector<float> out(dims.B * dims.T * dims.out_width());
  for (int64_t b = 0; b < dims.B; ++b)
    for (int64_t t = 0; t < dims.T; ++t) {
      const AttentionRow row = attention_row(dims, q, k, lambda, b, t);
      EXPECT_EQ(row.keys(), t + 1);
      for (int64_t i = 0; i < dims.H; ++i) {
        const int64_t g = i / n_rep;
        for (int64_t x = 0; x < dv; ++x) {
          double y = 0;
          for (int64_t s = 0; s <= t; ++s) y += row.head_row(i)[s] * v[(b * dims.T + s) * dims.v_width() + g * dv + x];
          out[(b * dims.T + t) * dims.out_width() + i * dv + x] = static_cast<float>(y);
        }
      }
    }
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  std::string mismatch;
  EXPECT_TRUE(testing::all_close(got, want, 1e-5, 1e-5, &mismatch))
      << what << ": " << mismatch << " (max abs diff " << testing::max_abs_diff(got, want) << ")";
}

TEST(AttentionMaps, HeadRowsTimesValuesGiveTheReferenceOutput) {
  const AttentionDims shapes[] = {
      {AttentionKind::baseline, 2, 1, 2, 1, 16}, {AttentionKind::baseline, 1, 37, 4, 2, 24},
      {AttentionKind::diff, 1, 33, 2, 2, 16},    {AttentionKind::diff, 2, 20, 4, 1, 8},
      {AttentionKind::diff2, 1, 41, 4, 2, 16},   {AttentionKind::diff2, 2, 17, 2, 1, 32},
      {AttentionKind::diff_grouped, 1, 29, 6, 2, 16, 3}, {AttentionKind::diff_grouped, 2, 15, 4, 1, 8, 2}};
  for (const AttentionDims& dims : shapes) {
    SCOPED_TRACE(testing::describe(dims));
    const AttentionCase c = AttentionCase::random(dims, 11 + dims.T);
    std::vector<float> want(c.rows() * dims.out_width());
    attention_forward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), want.data());
    expect_close(apply_rows(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr()), want, "head rows x V");
  }
}

TEST(AttentionMaps, RowSumsAndNormalisation) {
  for (AttentionKind kind : {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2}) {
    const AttentionDims dims{kind, 2, 12, 2, 1, 8};
    SCOPED_TRACE(testing::describe(dims));
    const AttentionCase c = AttentionCase::random(dims, 3);
    const AttentionRow row = attention_row(dims, c.q.data(), c.k.data(), c.lambda_ptr(), 1, 9);
    ASSERT_EQ(row.maps, kind == AttentionKind::baseline ? 2 : 4);
    for (int64_t j = 0; j < row.maps; ++j) {
      double sum = 0;
      for (int64_t s = 0; s < row.keys(); ++s) sum += row.softmax[j * row.keys() + s];
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
    for (int64_t i = 0; i < row.heads; ++i) {
      double w = 0;
      if (kind == AttentionKind::diff) w = c.lambda[0];
      if (kind == AttentionKind::diff2) w = 1.0 / (1.0 + std::exp(-static_cast<double>(c.lambda[(1 * 12 + 9) * 2 + i])));
      EXPECT_NEAR(row.weight[i], w, 1e-12);
      double head_sum = 0, normalised_sum = 0;
      for (int64_t s = 0; s < row.keys(); ++s) head_sum += row.head_row(i)[s];
      for (double x : row.normalised(i)) normalised_sum += x;
      EXPECT_NEAR(head_sum, 1.0 - w, 1e-12);
      EXPECT_NEAR(normalised_sum, 1.0, 1e-12);
    }
  }
  // lambda = 1: the differential row sums to 0 and has no normalised form.
  const AttentionDims dims{AttentionKind::diff, 1, 5, 1, 1, 8};
  AttentionCase c = AttentionCase::random(dims, 4);
  c.lambda = {1.0f};
  const AttentionRow row = attention_row(dims, c.q.data(), c.k.data(), c.lambda_ptr(), 0, 4);
  EXPECT_TRUE(std::isnan(row.normalised(0)[0]));
}

TEST(AttentionMaps, ErrorsNameTheProblem) {
  const AttentionDims dims{AttentionKind::diff2, 1, 5, 1, 1, 8};
  const AttentionCase c = AttentionCase::random(dims, 4);
  EXPECT_NE(testing::error_of([&] { attention_row(dims, c.q.data(), c.k.data(), c.lambda_ptr(), 0, 5); })
                .find("query position 5 outside the sequence [0, 5)"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { attention_row(dims, c.q.data(), c.k.data(), nullptr, 0, 1); }).find("lambda"),
            std::string::npos);
}

// Whole decoders (with the Table 6 ablations): the rows built from Activations reproduce the
// attention output the forward pass stored, layer by layer.
TEST(AttentionMaps, ReproduceTheDecodersAttentionOutput) {
  struct Variant {
    const char* attention;
    int heads, kv_heads;
    nlohmann::json extra;
  };
  const Variant variants[] = {{"baseline", 4, 2, {}},
                              {"diff", 2, 1, {}},
                              {"diff", 2, 2, {{"diff_subln", false}}},
                              {"diff", 2, 1, {{"lambda_init", 0.5}}},
                              {"diff2", 2, 1, {}}};
  for (const Variant& v : variants) {
    nlohmann::json j = {{"model_type", "difftx"}, {"attention", v.attention}, {"vocab_size", 31},
                        {"hidden_size", 32},      {"num_hidden_layers", 2},   {"num_attention_heads", v.heads},
                        {"num_key_value_heads", v.kv_heads}, {"head_dim", 8}, {"intermediate_size", 48}};
    if (!v.extra.is_null()) j.update(v.extra);
    const model::ModelConfig c = model::config_from_json(j, "test");
    SCOPED_TRACE(j.dump());
    model::Model model(c);
    model::init_parameters(c, model.table, model.host_weights(), 5);
    for (int64_t i = 0; i < model.weight_floats(); ++i) model.host_weights()[i] *= 3.0f;  // sharper maps than at init
    Rng rng(2);
    const int64_t B = 2, T = 9;
    std::vector<int32_t> tokens(B * T);
    for (auto& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab_size));
    model::Activations acts(c, B, T);
    model::decoder_forward(model, acts, tokens.data());
    for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
      const model::LayerTap a = model::layer_tap(c, acts, l);
      const float* att = acts.layers[l].att.host();
      expect_close(apply_rows(a.dims, a.q, a.k, acts.layers[l].v.host(), a.lambda),
                   std::vector<float>(att, att + B * T * a.dims.out_width()), "layer " + std::to_string(l));
    }
  }
}

}  // namespace
}  // namespace difftx::eval
