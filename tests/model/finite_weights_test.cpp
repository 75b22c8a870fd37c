// require_finite_weights (model/finite_weights.h) checks a tensor in pieces on the OpenMP
// threads: whichever pieces hold non-finite values, the error names the first such element, as
// one scan in order would, for F32 tensors and for packed matrices widened a chunk of rows at a
// time.
#include <gtest/gtest.h>

#include <limits>

#include "model/finite_weights.h"
#include "model/storage_plan.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::model {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// An embedding of 8192 x 32 floats: four pieces of 65536.
ModelConfig wide_vocabulary() { return testing::small_config(kernels::AttentionKind::baseline, {.vocab_size = 8192}); }

TEST(FiniteWeights, AFiniteModelPasses) {
  const Model model = testing::random_model(wide_vocabulary(), 1);
  require_finite_weights(model, "m");
}

TEST(FiniteWeights, TheFirstNonFiniteElementIsNamedWhateverPieceHoldsIt) {
  Model model = testing::random_model(wide_vocabulary(), 1);
  const ParamInfo& p = *model.table.find("model.embed_tokens.weight");
  ASSERT_GT(p.numel, 2 * 65536);
  float* w = model.host_weights() + p.offset;
  w[100000] = kInf;  // the second piece
  w[70000] = kNaN;   // the second piece, earlier
  w[130000] = kNaN;  // the third piece
  EXPECT_NE(testing::error_of([&] { require_finite_weights(model, "m"); })
                .find("m: tensor 'model.embed_tokens.weight' holds a non-finite value (nan at element 70000)"),
            std::string::npos);
}

TEST(FiniteWeights, PackedMatricesNameTheirFirstNonFiniteElement) {
  const ModelConfig c = wide_vocabulary();
  Model f32 = testing::random_model(c, 2);
  const ParamInfo& e = *f32.table.find("model.embed_tokens.weight");
  f32.host_weights()[e.offset + 32 * 3000 + 5] = kInf;   // row 3000: a late chunk of 64 rows
  f32.host_weights()[e.offset + 32 * 200 + 1] = kNaN;    // row 200: the fourth chunk
  const Model packed = convert_matrices(f32, storage_plan(c, kernels::WeightType::bf16));
  EXPECT_NE(testing::error_of([&] { require_finite_weights(packed, "m"); })
                .find("holds a non-finite value (nan at element 6401)"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::model
