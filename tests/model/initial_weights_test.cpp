// `difftx init`'s weights a tensor at a time (model/initial_weights.h) are init_parameters' bit
// for bit, asked in table order or not; the stream they cut into parallel pieces (Rng::skip) is
// the sequential one.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/rng.h"
#include "io/json_file.h"
#include "model/initial_weights.h"
#include "model/model.h"
#include "model/model_io.h"
#include "source_dir.h"

namespace difftx::model {
namespace {

TEST(Rng, SkipIsThatManyDraws) {
  Rng a(42), b(42);
  for (int i = 0; i < 1000; ++i) a.next_u64();
  b.skip(1000);
  EXPECT_EQ(a.next_u64(), b.next_u64());
  Rng c(7), d(7);
  for (int i = 0; i < 10; ++i) c.normal();
  d.skip(20);
  EXPECT_EQ(c.normal(), d.normal());
}

void expect_tensors_of_init_parameters(const std::string& config_file, uint64_t seed) {
  const ModelConfig config = model_config_from_json(io::read_json_file(config_file), config_file);
  Model model(config);
  init_parameters(config, model.table, model.host_weights(), seed);
  const InitialWeights weights(config, seed);
  const std::vector<ParamInfo>& params = model.table.params();
  std::vector<size_t> order;  // table order, then backwards (a restart each), then every other
  for (size_t i = 0; i < params.size(); ++i) order.push_back(i);
  for (size_t i = params.size(); i-- > 0;) order.push_back(i);
  for (size_t i = 1; i < params.size(); i += 2) order.push_back(i);
  for (size_t i : order) {
    const ParamInfo& p = params[i];
    std::vector<float> got(p.numel);
    weights.read(p.name, got);
    ASSERT_EQ(std::memcmp(got.data(), model.host_weights() + p.offset, p.numel * sizeof(float)), 0)
        << config_file << " " << p.name;
  }
}

TEST(InitialWeights, DrawsWhatInitParametersDraws) {
  // large tensors (the embedding: 2M values) go in parallel pieces; PolyNorm's are constants
  for (const char* config : {"configs/small/diff.json", "configs/small/diff_grouped.json", "configs/tiny/diff2.json",
                             "tests/fixtures/hf/motif_r4_kv2_bf16/config.json"})
    expect_tensors_of_init_parameters(std::string(DIFFTX_SOURCE_DIR) + "/" + config, 5);
}

}  // namespace
}  // namespace difftx::model
