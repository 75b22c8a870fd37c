// A hybrid stack (Phi-4-mini-flash's SambaY: Mamba state slots, sliding-window and full
// differential attention over the paged cache, cross layers over the full layer's pages, the GMU)
// through the engine (infer/hybrid_forward.h): every position's logits, prefilled and decoded,
// against the whole-sequence forward (model/forward_logits) for each phi4flash fixture (windows
// shorter than the sequence, pair-GQA, F32 and BF16, tied and untied); greedy generation equals
// the whole forward's argmax chain; a prompt cut into chunks streams the bits of one chunk; the
// cache groups, the pool's context and its bytes per token against a DIFF V1 decoder of the same
// width; the prefix cache off, and every other device against the CPU. Batch invariance
// and the seeded random workload run in engine_test.cpp (its hybrid cases).
#include <gtest/gtest.h>
#include "source_dir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "core/rng.h"
#include "infer/engine.h"
#include "infer/kv_cache_manager.h"
#include "infer/kv_pool.h"
#include "infer/state_pool.h"
#include "model/formats/phi4flash_config.h"
#include "model/forward_logits.h"
#include "model/model_io.h"
#include "support/backend_case.h"
#include "support/engine_runs.h"
#include "support/fixture_dirs.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::infer {

using kernels::KvStorage;
using model::Model;

namespace {

using testing::random_tokens;

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/phi4flash";

std::vector<std::string> fixture_names() { return testing::subdirectory_names(kFixtures); }

// Float32 logits through other summation orders (the GEMV and GEMM vs by size, split-KV decode
// attention vs the fused kernel; Mamba's kernels give the same bits in both forms).
constexpr double kLogitAtol = 1e-5, kLogitRtol = 1e-5;

std::vector<float> whole_forward(const Model& model, const std::vector<int32_t>& tokens) {
  std::vector<float> out(tokens.size() * model.config.vocab_size);
  model::forward_logits(model, tokens, out.data());
  return out;
}

class HybridEngineFixture : public ::testing::TestWithParam<std::string> {};

// 40 tokens (past several windows and two KV blocks of 16), prefilled up to 1, 13 or all of
// them (in one chunk, and in chunks of 5) and the rest decoded: the logits of every position.
TEST_P(HybridEngineFixture, LogitsOfEveryPositionMatchTheWholeForward) {
  const Model model = model::load_model_dir(kFixtures / GetParam(), model::MatrixPrecision::as_stored);
  const int64_t T = 40, V = model.config.vocab_size;
  ASSERT_LT(model.config.hybrid->sliding_window, T);
  const std::vector<int32_t> tokens = random_tokens(T, V, 11);
  const std::vector<float> full = whole_forward(model, tokens);
  double scale = 0;
  for (float v : full) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (int64_t budget : {int64_t{512}, int64_t{5}})
    for (int64_t prefill : {int64_t{1}, int64_t{13}, T}) {
      EngineOptions o;
      o.kv_block_tokens = 16;
      o.max_batch_tokens = budget;
      const std::vector<float> logits = testing::engine_logits(
          model, {tokens.data(), static_cast<size_t>(prefill)},
          {tokens.data() + prefill, static_cast<size_t>(T - prefill)}, KvStorage::f32, o);
      ASSERT_EQ(static_cast<int64_t>(logits.size()), (T - prefill + 1) * V);
      double worst = 0;
      for (int64_t pos = prefill - 1; pos < T; ++pos)
        worst = std::max(worst,
                         testing::max_abs_diff(logits.data() + (pos - prefill + 1) * V, full.data() + pos * V, V));
      std::printf("  %-36s budget %3lld prefill %2lld + decode %2lld: max|err| %.3g (logit scale %.3g)\n",
                  GetParam().c_str(), (long long)budget, (long long)prefill, (long long)(T - prefill), worst, scale);
      EXPECT_LE(worst, kLogitAtol + kLogitRtol * scale) << GetParam() << " budget " << budget << " prefill " << prefill;
    }
}

// Greedy generation through the engine, against the whole forward's argmax over the growing
// sequence (the lowest id among equal logits, as the sampler takes it), with each token's logprob.
TEST_P(HybridEngineFixture, GreedyGenerateIsTheWholeForwardsArgmaxChain) {
  const Model model = model::load_model_dir(kFixtures / GetParam(), model::MatrixPrecision::as_stored);
  const int64_t V = model.config.vocab_size, N = 24;
  std::vector<int32_t> ids = random_tokens(6, V, 3);
  Request r{ids, {}, {}, {}};
  r.options.sampling.temperature = 0;
  r.options.max_new_tokens = N;
  r.options.logprobs = true;
  EngineOptions o;
  o.kv = KvStorage::f32;  // the whole forward's keys and values are F32
  o.kv_block_tokens = 16;
  Engine engine(model, nullptr, o);
  testing::Stream got;
  testing::submit_recorded(engine, r, got);
  engine.run_until_idle();
  ASSERT_EQ(static_cast<int64_t>(got.ids().size()), N);
  for (int64_t i = 0; i < N; ++i) {
    const std::vector<float> logits = whole_forward(model, ids);
    const float* last = logits.data() + (ids.size() - 1) * V;
    const auto best = static_cast<int32_t>(std::max_element(last, last + V) - last);
    ASSERT_EQ(got.ids()[i], best) << GetParam() << ": token " << i;
    double z = 0;
    for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(last[v]) - last[best]);
    EXPECT_NEAR(got.logprobs()[i], -std::log(z), 1e-4) << GetParam() << ": token " << i;
    ids.push_back(best);
  }
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

INSTANTIATE_TEST_SUITE_P(Phi4Flash, HybridEngineFixture, ::testing::ValuesIn(fixture_names()),
                         [](const auto& info) { return info.param; });

Request sampled(std::vector<int32_t> prompt, int64_t new_tokens, uint64_t seed) {
  Request r{std::move(prompt), {}, {}, {}};
  r.options.max_new_tokens = new_tokens;
  r.options.sampling.temperature = 0.9;
  r.options.sampling.seed = seed;
  r.options.logprobs = true;
  return r;
}

// A 150-token prompt (30 windows of 5) in one chunk, in chunks of 7 and of 16, and beside a
// decoding neighbour: the same tokens and the same logprob bits.
TEST(HybridEngine, ChunkedPrefillStreamsTheBitsOfOneChunk) {
  const Model model = testing::random_model(testing::small_hybrid_config(), 5, 4.0f);
  const Request r = sampled(random_tokens(150, model.config.vocab_size, 2), 16, 7);
  std::vector<testing::Stream> runs;
  for (int64_t budget : {int64_t{512}, int64_t{7}, int64_t{16}}) {
    EngineOptions o;
    o.kv_block_tokens = 16;
    o.max_batch_tokens = budget;
    Engine engine(model, nullptr, o);
    testing::Stream neighbour, got;
    if (budget == 16) testing::submit_recorded(engine, sampled(random_tokens(9, 96, 4), 30, 1), neighbour);
    testing::submit_recorded(engine, r, got);
    engine.run_until_idle();
    EXPECT_EQ(engine.stats().kv_blocks_used, 0);
    runs.push_back(got);
  }
  ASSERT_EQ(runs[0].ids().size(), 16u);
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].ids(), runs[0].ids()) << "run " << i;
    EXPECT_EQ(runs[i].logprobs(), runs[0].logprobs()) << "run " << i;
  }
}

// SambaY's 8 layers: Mamba at 0, 2 and 4 (the memory), windows at 1 and 3, full attention at 5
// (a page group each), GMU at 6, cross-attention at 7 (reading layer 5's pages).
TEST(HybridEngine, CacheGroupsFollowTheLayerKinds) {
  const model::ModelConfig c = testing::small_hybrid_config(64, 8, 5);
  const std::vector<KvCacheGroup> g = kv_cache_groups(c);
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g[0].kind, CacheKind::sliding_window);
  EXPECT_EQ(g[0].layers, std::vector<int64_t>{1});
  EXPECT_EQ(g[0].window, 5);
  EXPECT_EQ(g[1].layers, std::vector<int64_t>{3});
  EXPECT_EQ(g[2].kind, CacheKind::full);
  EXPECT_EQ(g[2].layers, std::vector<int64_t>{5});
  EXPECT_EQ(g[3].kind, CacheKind::shared);
  EXPECT_EQ(g[3].layers, std::vector<int64_t>{7});
  EXPECT_EQ(g[3].source, 2);
  EXPECT_EQ(g[4].kind, CacheKind::recurrent);
  EXPECT_EQ(g[4].layers, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(kv_block_layers(g), 1);
  // 100 tokens in blocks of 16: 7 blocks of the full layer, each window no more than 1 + 2.
  EXPECT_EQ(sequence_blocks(g, 100, 16), 7 + 2 * 3);
  EXPECT_EQ(sequence_blocks(g, 10, 16), 1 + 2 * 1);
  EXPECT_EQ(sequence_tokens(g, 13, 16, 1000), 112);
  EXPECT_EQ(sequence_tokens(g, 13, 16, 50), 50);
  // The pool holds that context, and the prefix cache says why it is off.
  EngineOptions o;
  o.kv_block_tokens = 16;
  o.kv_tokens = 100;
  const Model model = testing::random_model(c, 1);
  Engine engine(model, nullptr, o);
  EXPECT_EQ(engine.stats().kv_blocks, 13);
  EXPECT_EQ(engine.context(), 112);
  EXPECT_NE(std::string(engine.stats().prefix_cache).find("recurrent state"), std::string::npos);
}

// What a sequence holds per token against a DIFF V1 decoder of the same width, depth, heads and KV
// storage (BF16, blocks of 32): the hybrid's full layer (one of its layers' keys and values), its
// windows and its Mamba state; the decoder's every layer. Printed for the small shape and the
// real one (docs/BENCHMARKS.md "Hybrid engine").
TEST(HybridEngine, HoldsAFractionOfTheKvBytesOfADiffDecoder) {
  const model::ModelConfig small = testing::small_hybrid_config(64, 8, 5);
  const model::ModelConfig real = model::config_from_phi4flash(
      {{"model_type", "phi4flash"}, {"vocab_size", 200064}, {"hidden_size", 2560}, {"intermediate_size", 10240},
       {"num_hidden_layers", 32}, {"num_attention_heads", 40}, {"num_key_value_heads", 20}, {"sliding_window", 512},
       {"max_position_embeddings", 262144}},
      "real.json");
  const int64_t P = 32;
  for (const model::ModelConfig* hybrid : {&small, &real}) {
    model::ModelConfig diff = *hybrid;
    diff.hybrid.reset();
    EXPECT_EQ(KvPool::block_bytes(diff, KvStorage::bf16, P),
              hybrid->num_hidden_layers * KvPool::block_bytes(*hybrid, KvStorage::bf16, P));
    for (int64_t T : {int64_t{4096}, int64_t{32768}}) {
      const double hybrid_bytes = static_cast<double>(KvPool::sequence_bytes(*hybrid, KvStorage::bf16, P, T)) / T;
      const double diff_bytes = static_cast<double>(KvPool::sequence_bytes(diff, KvStorage::bf16, P, T)) / T;
      std::printf("  hidden %4lld, %2lld layers, %6lld tokens: bytes per token hybrid %.0f, DIFF V1 %.0f (%.3f)\n",
                  (long long)hybrid->hidden_size, (long long)hybrid->num_hidden_layers, (long long)T, hybrid_bytes,
                  diff_bytes, hybrid_bytes / diff_bytes);
      EXPECT_LT(hybrid_bytes, diff_bytes / 4);  // one full layer of 8 or 32, plus windows and state
    }
  }
  // the small one's: one full layer's blocks, two windows of 5 (three blocks each at most), the state
  const int64_t T = 4096, layer_block = KvPool::block_bytes(small, KvStorage::bf16, P);
  EXPECT_EQ(KvPool::sequence_bytes(small, KvStorage::bf16, P, T),
            (T / P + 2 * 3) * layer_block + StatePool::slot_bytes(small));
  EXPECT_EQ(StatePool::slot_bytes(small), 3 * (3 * 128 + 128 * 8) * 4);  // 3 Mamba layers, E 128, S 8, K 4
}

// Every other device runs the hybrid ops too (Vulkan's on lavapipe in CI): its whole-sequence
// forward of each fixture against the CPU's, and for one fixture its engine's logits of every
// position (13 prefilled in chunks of 5, the rest decoded) against the CPU's whole forward.
TEST(HybridEngine, OtherDevicesMatchTheCpu) {
  const int64_t T = 40, prefill = 13;
  for (const std::string& device : testing::devices_here()) {
    if (device == "cpu") continue;
    for (const std::string& name : fixture_names()) {
      const Model cpu = model::load_model_dir(kFixtures / name, model::MatrixPrecision::as_stored);
      const int64_t V = cpu.config.vocab_size;
      const std::vector<int32_t> tokens = random_tokens(T, V, 11);
      const std::vector<float> want = whole_forward(cpu, tokens);
      double scale = 0;
      for (float v : want) scale = std::max(scale, static_cast<double>(std::fabs(v)));
      Model model = model::load_model_dir(kFixtures / name, model::MatrixPrecision::as_stored);
      model.move_to(backends::open_backend(device));
      const double whole = testing::max_abs_diff(whole_forward(model, tokens).data(), want.data(), T * V);
      std::printf("  %-8s %-36s whole forward vs the CPU's: max|err| %.3g (logit scale %.3g)\n", device.c_str(),
                  name.c_str(), whole, scale);
      EXPECT_LE(whole, kLogitAtol + kLogitRtol * scale) << device << " " << name;
      if (name != "phi4flash_l8_mha_f32") continue;
      EngineOptions o;
      o.kv_block_tokens = 16;
      o.max_batch_tokens = 5;
      const std::vector<float> logits =
          testing::engine_logits(model, {tokens.data(), static_cast<size_t>(prefill)},
                                 {tokens.data() + prefill, static_cast<size_t>(T - prefill)}, KvStorage::f32, o);
      ASSERT_EQ(static_cast<int64_t>(logits.size()), (T - prefill + 1) * V) << device;
      double worst = 0;
      for (int64_t pos = prefill - 1; pos < T; ++pos) {
        const float* row = logits.data() + (pos - prefill + 1) * V;
        worst = std::max(worst, testing::max_abs_diff(row, want.data() + pos * V, V));
      }
      std::printf("  %-8s %-36s engine vs the CPU's whole forward: max|err| %.3g\n", device.c_str(), name.c_str(),
                  worst);
      EXPECT_LE(worst, kLogitAtol + kLogitRtol * scale) << device << " " << name << " engine";
    }
  }
}

}  // namespace
}  // namespace difftx::infer
