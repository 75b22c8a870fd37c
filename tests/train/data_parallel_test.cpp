// ZeRO-1 data parallelism (train/data_parallel.h) over ranks that are threads: sharded AdamW on
// the ranks' summed gradients gives every rank the parameters one optimizer gets from the
// summed gradient, bit for bit, for awkward bucket sizes that cut tensors apart; the moments
// gathered for a checkpoint are that optimizer's, and scattered to another number of ranks
// they continue its run; replicas that differ are named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "model/config.h"
#include "model/parameters.h"
#include "support/backend_case.h"
#include "support/testing.h"
#include "support/thread_ranks.h"
#include "train/data_parallel.h"

namespace difftx::train {

using model::ParameterTable;

namespace {

using testing::error_of;
using testing::run_ranks;

model::ModelConfig awkward_config() {
  const nlohmann::json j = {{"model_type", "difftx"}, {"attention", "diff"}, {"vocab_size", 37},
                            {"hidden_size", 24}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                            {"num_key_value_heads", 1}, {"head_dim", 6}, {"intermediate_size", 40},
                            {"tie_word_embeddings", false}};
  return model::config_from_json(j, "awkward");
}

// Rank r's gradient in step s: random values in the tensors, zero in the padding.
std::vector<float> gradient(const ParameterTable& table, int64_t arena, int step, int rank) {
  std::vector<float> g(arena, 0.0f);
  Rng rng(1000 * step + rank);
  for (const model::ParamInfo& p : table.params())
    for (int64_t i = 0; i < p.numel; ++i) g[p.offset + i] = static_cast<float>(rng.uniform(-1, 1));
  return g;
}

struct OptimizerRun {
  std::vector<float> weights, m, v;  // whole arenas (table.total_floats())
};

// One optimizer over the whole arena, stepped with the ranks' gradients summed in rank order
// (as the test communicator sums them).
OptimizerRun single_optimizer(const ParameterTable& table, const AdamWConfig& config, int ranks, int first, int last,
                              const OptimizerRun& start) {
  const int64_t n = table.total_floats();
  OptimizerRun run = start;
  AdamW adamw(backends::cpu_backend(), table, config);
  std::memcpy(adamw.first_moment().host(), run.m.data(), sizeof(float) * n);
  std::memcpy(adamw.second_moment().host(), run.v.data(), sizeof(float) * n);
  adamw.set_steps_taken(first);
  for (int s = first; s < last; ++s) {
    std::vector<float> sum = gradient(table, n, s, 0);
    for (int r = 1; r < ranks; ++r) {
      const std::vector<float> g = gradient(table, n, s, r);
      for (int64_t i = 0; i < n; ++i) sum[i] += g[i];
    }
    adamw.step(testing::host_ptr(run.weights.data()), testing::host_ptr<const float>(sum.data()), 1e-2,
               adamw.gradient_norm(testing::host_ptr<const float>(sum.data())));
  }
  run.m.assign(adamw.first_moment().host(), adamw.first_moment().host() + n);
  run.v.assign(adamw.second_moment().host(), adamw.second_moment().host() + n);
  return run;
}

// The same steps data parallel over `ranks` threads; every rank's result, by rank. `start`'s
// moments enter through scatter_moments from rank 0, as when resuming a checkpoint.
std::vector<OptimizerRun> data_parallel(const ParameterTable& table, const AdamWConfig& config, int ranks,
                                        int64_t bucket, int first, int last, const OptimizerRun& start) {
  const int64_t n = table.total_floats();
  std::vector<OptimizerRun> out(ranks);
  run_ranks(ranks, [&](dist::Communicator& comm) {
    DataParallel dp(comm, n, bucket);
    std::vector<float> weights(dp.padded_floats(), 0.0f);
    std::memcpy(weights.data(), start.weights.data(), sizeof(float) * n);
    AdamW adamw(backends::cpu_backend(), table, config, dp.owned_pieces());
    adamw.set_steps_taken(first);
    Buffer<float> m_arena, v_arena;
    float* m = dp.moment_arena(adamw.first_moment().host(), m_arena);
    float* v = dp.moment_arena(adamw.second_moment().host(), v_arena);
    if (comm.rank() == 0) {
      std::memcpy(m, start.m.data(), sizeof(float) * n);
      std::memcpy(v, start.v.data(), sizeof(float) * n);
    }
    dp.scatter_moments(m, adamw.first_moment().host(), 0);
    dp.scatter_moments(v, adamw.second_moment().host(), 0);
    for (int s = first; s < last; ++s) {
      std::vector<float> g = gradient(table, dp.padded_floats(), s, comm.rank());
      const float* reduced = dp.reduce_gradients(g.data());
      double sum_of_squares = adamw.gradient_sum_of_squares(testing::host_ptr(reduced));
      comm.all_reduce_sum(&sum_of_squares, 1);
      adamw.step(testing::host_ptr(weights.data()), testing::host_ptr(reduced), 1e-2, std::sqrt(sum_of_squares));
      dp.all_gather(weights.data());
    }
    dp.gather_moments(adamw.first_moment().host(), m);
    dp.gather_moments(adamw.second_moment().host(), v);
    OptimizerRun& r = out[comm.rank()];
    r.weights.assign(weights.data(), weights.data() + n);
    r.m.assign(m, m + n);
    r.v.assign(v, v + n);
  });
  return out;
}

OptimizerRun initial_run(const model::ModelConfig& config, const ParameterTable& table) {
  OptimizerRun run{std::vector<float>(table.total_floats()), std::vector<float>(table.total_floats(), 0.0f),
                   std::vector<float>(table.total_floats(), 0.0f)};
  model::init_parameters(config, table, run.weights.data(), 3);
  return run;
}

TEST(DataParallel, ShardedAdamWEqualsOneOptimizerBitForBit) {
  const model::ModelConfig config = awkward_config();
  const ParameterTable table(config);
  AdamWConfig adamw;
  adamw.grad_clip = 0;  // clipping compares a norm summed per shard: see the next test
  const OptimizerRun start = initial_run(config, table);
  const OptimizerRun want = single_optimizer(table, adamw, 3, 0, 4, start);
  for (const int64_t bucket : {int64_t(48), int64_t(1000), int64_t(1) << 22}) {
    const std::vector<OptimizerRun> got = data_parallel(table, adamw, 3, bucket, 0, 4, start);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(got[r].weights, want.weights) << "rank " << r << ", bucket " << bucket;
      EXPECT_EQ(got[r].m, want.m) << "rank " << r << ", bucket " << bucket;
      EXPECT_EQ(got[r].v, want.v) << "rank " << r << ", bucket " << bucket;
    }
  }
}

TEST(DataParallel, ClippingUsesTheGlobalNormAndReplicasStayIdentical) {
  const model::ModelConfig config = awkward_config();
  const ParameterTable table(config);
  AdamWConfig adamw;
  adamw.grad_clip = 0.5;  // far below the summed gradients' norm: every step clips
  const OptimizerRun start = initial_run(config, table);
  const OptimizerRun want = single_optimizer(table, adamw, 2, 0, 4, start);
  const std::vector<OptimizerRun> got = data_parallel(table, adamw, 2, 80, 0, 4, start);
  EXPECT_EQ(got[0].weights, got[1].weights);
  EXPECT_TRUE(testing::all_close(got[0].weights, want.weights, 1e-7, 1e-5));
  EXPECT_TRUE(testing::all_close(got[0].m, want.m, 1e-7, 1e-5));
}

TEST(DataParallel, GatheredMomentsResumeOnAnotherNumberOfRanks) {
  const model::ModelConfig config = awkward_config();
  const ParameterTable table(config);
  AdamWConfig adamw;
  adamw.grad_clip = 0;
  const OptimizerRun start = initial_run(config, table);
  // 3 ranks for steps 0-2, 2 ranks for steps 3-5: one optimizer over the 2 ranks' gradients.
  const OptimizerRun saved = data_parallel(table, adamw, 3, 64, 0, 3, start)[0];
  const OptimizerRun want = single_optimizer(table, adamw, 2, 3, 6, saved);
  for (const OptimizerRun& got : data_parallel(table, adamw, 2, 96, 3, 6, saved)) {
    EXPECT_EQ(got.weights, want.weights);
    EXPECT_EQ(got.m, want.m);
  }
  // One rank reads the arena as it is.
  const OptimizerRun alone = data_parallel(table, adamw, 1, 64, 3, 6, saved)[0];
  EXPECT_EQ(alone.weights, single_optimizer(table, adamw, 1, 3, 6, saved).weights);
}

TEST(DataParallel, BucketsCoverThePaddedArenaInAlignedPieces) {
  run_ranks(3, [](dist::Communicator& comm) {
    DataParallel dp(comm, 1000, 100);  // buckets of 96 floats: 10 full and one of 48
    EXPECT_EQ(dp.padded_floats(), 1008);
    EXPECT_EQ(dp.bucket_count(), 11);
    int64_t owned = 0;
    for (const ArenaPiece& p : dp.owned_pieces()) {
      EXPECT_EQ(p.begin % 16, 0);
      EXPECT_EQ((p.end - p.begin) % 16, 0);
      owned += p.end - p.begin;
    }
    EXPECT_EQ(owned, 1008 / 3);
  });
}

TEST(DataParallel, DifferingReplicasAreNamed) {
  std::mutex mutex;
  std::vector<std::string> messages;
  run_ranks(3, [&](dist::Communicator& comm) {
    DataParallel dp(comm, 100, 1 << 20);
    std::vector<float> weights(dp.padded_floats(), 1.0f);
    dp.verify_replicas(weights.data(), 6);  // equal: passes
    if (comm.rank() == 2) weights[99] = std::nextafter(1.0f, 2.0f);
    const std::string msg = error_of([&] { dp.verify_replicas(weights.data(), 7); });
    std::lock_guard lock(mutex);
    messages.push_back(msg);
  });
  ASSERT_EQ(messages.size(), 3u);
  for (const std::string& msg : messages)
    EXPECT_EQ(msg, "step 7: the parameters of rank 2 differ from rank 0's (the data-parallel replicas diverged)");
}

}  // namespace
}  // namespace difftx::train
