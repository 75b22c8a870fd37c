// A 16K-token prefill followed by decoding runs in O(T) memory: the peak resident-set growth
// (Linux VmHWM, in a forked child per measurement) of prefill + 32 decode steps at T = 16384
// against T = 2048. Linear memory grows 8x between the two; anything holding a T x T map
// grows 64x (and one 16K x 16K float map alone is 1 GiB), so the test fails above 16x or 1 GiB.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <vector>

#include "core/rng.h"
#include "support/engine_runs.h"
#include "model/model.h"
#include "support/peak_memory.h"

namespace difftx::infer {

using kernels::AttentionKind;

namespace {

model::ModelConfig tiny_config(AttentionKind kind) {
  model::ModelConfig c;
  c.attention = kind;
  c.vocab_size = 256;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = kind == AttentionKind::baseline ? 2 : 1;
  c.num_key_value_heads = 1;
  c.head_dim = 16;
  c.intermediate_size = 64;
  c.max_position_embeddings = 16416;
  c.validate();
  return c;
}

// Peak growth in KiB of a fresh engine's prefill of T tokens and 32 decode steps.
int64_t peak_growth_kib(AttentionKind kind, int64_t T) {
  return testing::peak_growth_kib_in_child([&](const std::function<void()>& mark) {
    const model::ModelConfig c = tiny_config(kind);
    model::Model model(c);
    model::init_parameters(c, model.table, model.host_weights(), 1);
    Rng rng(T);
    std::vector<int32_t> tokens(T + 32);
    for (auto& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab_size));
    mark();
    EngineOptions o;
    o.kv_tokens = T + 33;
    const std::vector<float> logits = testing::engine_logits(model, {tokens.data(), static_cast<size_t>(T)},
                                                             {tokens.data() + T, 32}, kernels::KvStorage::f32, o);
    if (static_cast<int64_t>(logits.size()) != 33 * c.vocab_size) throw std::runtime_error("not prompt + 32 decode steps");
  });
}

TEST(LongContextMemory, PrefillOf16KTokensThenDecodeGrowsLinearly) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan build: shadow memory and quarantine make resident-set peaks meaningless here";
#endif
  for (AttentionKind kind : {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2}) {
    const int64_t small = peak_growth_kib(kind, 2048), large = peak_growth_kib(kind, 16384);
    std::printf("  %-8s peak growth: T=2048 %.1f MiB, T=16384 %.1f MiB (x%.1f)\n", kernels::attention_kind_name(kind),
                small / 1024.0, large / 1024.0, static_cast<double>(large) / std::max<int64_t>(small, 1));
    EXPECT_GT(small, 0) << "VmHWM did not move: the measurement sees nothing";
    EXPECT_LT(large, 16 * std::max<int64_t>(small, 1024))
        << kernels::attention_kind_name(kind) << ": more than linear growth";
    EXPECT_LT(large, 1024 * 1024) << kernels::attention_kind_name(kind) << ": over 1 GiB at T = 16384";
  }
}

}  // namespace
}  // namespace difftx::infer
