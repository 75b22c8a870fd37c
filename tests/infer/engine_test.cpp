// The continuous-batching engine (infer/engine.h): batch invariance (a request's tokens and
// logprobs are bit-identical alone, beside others, with a cached prefix, under any chunking and
// after preemption) for every variant, weight type and KV type, and for a hybrid stack (Mamba
// state slots, sliding windows, the cross layers, prefix cache off); equality with generate();
// the scheduler's queue limit, cancellation at every stage, prefix-cache reuse and eviction; a
// seeded random workload checked step by step; and the pool back to empty after every test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <map>
#include <string>

#include "backends/backend.h"
#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "infer/generate.h"
#include "infer/kv_pool.h"
#include "kernels/quant/weight_panels.h"
#include "model/storage_plan.h"
#include "support/backend_case.h"
#include "support/engine_runs.h"
#include "support/level_kernels.h"
#include "support/random_model.h"

namespace difftx::infer {

using kernels::AttentionKind;
using kernels::KvStorage;
using kernels::WeightType;
using model::Model;

namespace {

using testing::random_tokens;
using testing::Stream;

// Every attention variant the engine serves.
constexpr AttentionKind kKinds[] = {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2,
                                    AttentionKind::diff_grouped};

model::ModelConfig tiny_config(AttentionKind kind, int64_t hidden = 64) {
  return testing::engine_config(kind, hidden, 96, 512);
}

Request sampled_request(std::vector<int32_t> prompt, int64_t new_tokens, uint64_t seed) {
  Request r{std::move(prompt), {}, {}, {}};
  r.options.max_new_tokens = new_tokens;
  r.options.sampling.temperature = 0.9;
  r.options.sampling.top_k = 40;
  r.options.sampling.seed = seed;
  r.options.logprobs = true;
  r.options.top_logprobs = 3;
  return r;
}

// The request alone on a fresh engine.
Stream alone(const Model& model, const Request& r, EngineOptions o = {}) {
  Engine engine(model, nullptr, o);
  Stream out;
  testing::submit_recorded(engine, r, out);
  engine.run_until_idle();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  return out;
}

struct InvarianceCase {
  AttentionKind kind;
  WeightType weights;
  KvStorage kv;
  std::string device = "cpu";  // backends::open_backend's name
  bool hybrid = false;         // a SambaY stack (testing::small_hybrid_config) instead of `kind`'s decoder
};

// A name gtest takes: letters, digits and underscores.
std::string test_name(const std::string& device) {
  std::string name;
  for (char ch : device) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

std::string describe(const InvarianceCase& c) {
  return (c.device == "cpu" ? "" : test_name(c.device) + "_") +
         (c.hybrid ? "hybrid" : kernels::attention_kind_name(c.kind)) + "_" + kernels::weight_type_name(c.weights) +
         "_kv_" + kernels::kv_storage_name(c.kv);
}
// Not gtest's bytes of the object, which hold the device string's address: the test's ctest name
// would change with every build.
void PrintTo(const InvarianceCase& c, std::ostream* out) { *out << describe(c); }

Model case_model(const InvarianceCase& c) {
  // Hidden 256 so that every block type's rows are whole blocks (Q4_K: 256 weights).
  const int64_t hidden = c.weights == WeightType::f32 ? 64 : 256;
  const model::ModelConfig config = c.hybrid ? testing::small_hybrid_config(hidden) : tiny_config(c.kind, hidden);
  Model model = c.weights == WeightType::f32
                    ? testing::random_model(config, 7)
                    : model::convert_matrices(testing::random_model(config, 7), model::storage_plan(config, c.weights));
  model.move_to(backends::open_backend(c.device));
  return model;
}

class BatchInvariance : public ::testing::TestWithParam<InvarianceCase> {};

// A model whose panelled matrices gave their stored bytes back (Model::engine_matrices_only, as
// `difftx generate` and `serve` hold it) streams what the same model with both copies does, tied
// head included (its token lookup reads rows back from the panels; Q4_K's keeps its bytes); its
// `matrices` can no longer multiply by the released matrices, and says so.
TEST(Engine, PanelsOnlyModelStreamsTheSame) {
  for (AttentionKind kind : {AttentionKind::baseline, AttentionKind::diff})  // untied, tied
    for (WeightType w : {WeightType::bf16, WeightType::f16, WeightType::q8_0, WeightType::q4_0, WeightType::q4_k}) {
      const std::string what = std::string(kernels::attention_kind_name(kind)) + " " + kernels::weight_type_name(w);
      const Model both = case_model({kind, w, KvStorage::bf16});
      Model only = case_model({kind, w, KvStorage::bf16});
      only.engine_matrices_only();
      Rng rng(9);
      const Request r = sampled_request(random_tokens(rng, 30, both.config.vocab_size), 12, 4);
      expect_same_stream(alone(only, r), alone(both, r), what);
      if (!backends::cpu::kernels().reads_panels(w)) continue;  // no panels at this CPU level: nothing was released
      const kernels::WeightMatrix q = backends::host_matrix(only.matrices.layers[0].q_proj);
      EXPECT_EQ(q.data, nullptr) << what;
      std::vector<float> x(q.cols), y(q.rows);
      EXPECT_THROW(matmul(q, x.data(), y.data(), 1), Error) << what;
      EXPECT_THROW(only.engine_matrices_only(), Error) << what;  // once only
    }
}

// One request (a 70-token prompt, 24 new tokens) against the same request among 12 others with
// other prompts, half of them sharing its first 40 tokens, under small budgets that chunk every
// prompt differently, with and without the prefix cache, and in a pool small enough to preempt.
TEST_P(BatchInvariance, TokensAndLogprobsDoNotDependOnTheBatch) {
  const InvarianceCase c = GetParam();
  const Model model = case_model(c);
  Rng rng(3);
  const std::vector<int32_t> prompt = random_tokens(rng, 70, model.config.vocab_size);
  const Request target = sampled_request(prompt, 24, 11);
  EngineOptions base;
  base.kv = c.kv;
  base.kv_block_tokens = 16;
  const Stream want = alone(model, target, base);
  ASSERT_EQ(want.ids().size(), 24u);

  struct Setting {
    const char* name;
    int64_t budget, pool_tokens;
    bool prefix_cache;
  };
  for (const Setting& s : {Setting{"budget 7", 7, 0, true}, Setting{"budget 64, no prefix cache", 64, 0, false},
                           Setting{"budget 33, small pool", 33, 320, true}}) {
    EngineOptions o = base;
    o.max_batch_tokens = s.budget;
    o.kv_tokens = s.pool_tokens;
    o.prefix_cache = s.prefix_cache;
    Engine engine(model, nullptr, o);
    std::vector<Stream> others(12);
    Stream got;
    for (int i = 0; i < 12; ++i) {
      std::vector<int32_t> p = random_tokens(rng, 20 + 9 * i, model.config.vocab_size);
      if (i % 2 == 0) {  // the target's first 40 tokens, then its own
        p.resize(std::max<size_t>(p.size(), 41));
        std::copy(prompt.begin(), prompt.begin() + 40, p.begin());
      }
      testing::submit_recorded(engine, sampled_request(p, 10 + i, 100 + i), others[i]);
      if (i == 5) testing::submit_recorded(engine, target, got);  // arrives while others run
    }
    engine.run_until_idle();
    expect_same_stream(got, want, describe(c) + ", " + s.name);
    const EngineStats st = engine.stats();
    EXPECT_EQ(st.kv_blocks_used, 0) << s.name;
    if (s.prefix_cache && !c.hybrid) {
      EXPECT_GT(st.prefix_hit_tokens, 0) << s.name;
    }
    if (c.hybrid) {  // the prefix cache is off for recurrent state
      EXPECT_EQ(st.prefix_hit_tokens, 0) << s.name;
    }
    if (s.pool_tokens > 0) {
      EXPECT_GT(st.preemptions, 0) << s.name << ": the small pool never preempted";
    }
  }
  // A second time on one engine: the prompt's blocks now come from the prefix cache (a hybrid
  // stack recomputes it).
  EngineOptions o = base;
  Engine engine(model, nullptr, o);
  Stream first, second;
  testing::submit_recorded(engine, target, first);
  engine.run_until_idle();
  testing::submit_recorded(engine, target, second);
  engine.run_until_idle();
  EXPECT_EQ(second.events.back().cached_tokens, c.hybrid ? 0 : 64);  // 4 full blocks of 16, the last token recomputed
  ASSERT_GT(second.events.size(), 1u);
  EXPECT_EQ(second.events.front().cached_tokens, c.hybrid ? 0 : 64);  // the first event says so too
  EXPECT_EQ(second.events.front().prompt_tokens, static_cast<int64_t>(target.prompt.size()));
  expect_same_stream(second, want, describe(c) + ", cached prefix");
}

std::vector<InvarianceCase> invariance_cases() {
  std::vector<InvarianceCase> out;
  for (AttentionKind kind : kKinds)
    for (KvStorage kv : {KvStorage::f32, KvStorage::bf16, KvStorage::int8}) out.push_back({kind, WeightType::f32, kv});
  for (AttentionKind kind : kKinds)
    for (WeightType w : {WeightType::bf16, WeightType::f16, WeightType::q8_0, WeightType::q4_0, WeightType::q4_k})
      out.push_back({kind, w, KvStorage::bf16});
  // A hybrid stack: every KV type and two weight types on the CPU; on the other devices below.
  for (KvStorage kv : {KvStorage::f32, KvStorage::bf16, KvStorage::int8})
    out.push_back({AttentionKind::diff, WeightType::f32, kv, "cpu", true});
  for (WeightType w : {WeightType::bf16, WeightType::q4_0})
    out.push_back({AttentionKind::diff, w, KvStorage::bf16, "cpu", true});
  // Every other device (Vulkan's on lavapipe in CI, which is slow): every variant, weight type
  // and KV type once, and the hybrid once (F32 weights at hidden 64: 19 s on lavapipe; F16 would
  // take the other types' hidden 256, 150 s).
  for (const std::string& device : testing::devices_here()) {
    if (device == "cpu") continue;
    for (const InvarianceCase& c : {InvarianceCase{AttentionKind::baseline, WeightType::f32, KvStorage::f32},
                                    InvarianceCase{AttentionKind::diff, WeightType::bf16, KvStorage::int8},
                                    InvarianceCase{AttentionKind::diff2, WeightType::q4_k, KvStorage::bf16},
                                    InvarianceCase{AttentionKind::diff_grouped, WeightType::q8_0, KvStorage::int8},
                                    InvarianceCase{AttentionKind::diff2, WeightType::f16, KvStorage::f32},
                                    InvarianceCase{AttentionKind::baseline, WeightType::q4_0, KvStorage::bf16}})
      out.push_back({c.kind, c.weights, c.kv, device});
    out.push_back({AttentionKind::diff, WeightType::f32, KvStorage::bf16, device, true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Engine, BatchInvariance, ::testing::ValuesIn(invariance_cases()),
                         [](const auto& info) { return describe(info.param); });

// generate() is the engine with one request: the same tokens as a request among others.
TEST(Engine, GenerateEqualsARequestAmongOthers) {
  const Model model = testing::random_model(tiny_config(AttentionKind::diff2), 5);
  Rng rng(9);
  const std::vector<int32_t> prompt = random_tokens(rng, 30, 96);
  GenerateOptions g;
  g.max_new_tokens = 20;
  g.sampling.seed = 4;
  std::vector<int32_t> generated;
  generate(model, prompt, g, [&](const TokenEvent& e) {
    if (e.id >= 0) generated.push_back(e.id);
  });
  EngineOptions o;
  o.max_batch_tokens = 5;
  Engine engine(model, nullptr, o);
  Stream got, other;
  testing::submit_recorded(engine, sampled_request(random_tokens(rng, 50, 96), 30, 1), other);
  Request r{prompt, {}, {}, {}};
  r.options.max_new_tokens = 20;
  r.options.sampling = g.sampling;
  testing::submit_recorded(engine, r, got);
  engine.run_until_idle();
  EXPECT_EQ(got.ids(), generated);
}

// A greedy request (prompt 1 2, at most 8 tokens, `change` setting its options) on a fresh engine
// whose model is the table `logits` for every token.
Stream run_on_table(std::vector<float> logits, const std::function<void(RequestOptions&)>& change) {
  return testing::run_on_table([logits](int32_t) { return logits; }, {1, 2}, change);
}

// A request's repetition penalty counts its prompt's tokens (as transformers and vLLM count them):
// every row's logits favour id 1, which the prompt holds, so its logit 2.0 falls to 2/3 and id 0
// (1.0) comes first; once drawn, id 0 falls to 1/3 and id 1 follows.
TEST(Engine, RepetitionPenaltyCountsThePromptsTokens) {
  for (const double penalty : {1.0, 3.0}) {
    const Stream out = run_on_table({1.0f, 2.0f, 0.0f, 0.0f}, [&](RequestOptions& o) {
      o.max_new_tokens = 2;
      o.sampling.repetition_penalty = penalty;
    });
    EXPECT_EQ(out.ids(), penalty == 1 ? (std::vector<int32_t>{1, 1}) : (std::vector<int32_t>{0, 1})) << penalty;
  }
}

// vLLM's min_tokens: a forward that always favours the stop token 0 (then 1) ends a request at
// its first token; with min_tokens 3 the first three are 1 (the stop token masked), then 0 ends it
// (unstreamed: the last event's count says it was generated). More than max_new_tokens: an error.
TEST(Engine, MinTokensMasksTheStopTokens) {
  for (const int64_t min_tokens : {0, 3}) {
    const Stream out = run_on_table({3.0f, 2.0f, 0.0f, 0.0f}, [&](RequestOptions& o) {
      o.min_tokens = min_tokens;
      o.stop_tokens = {0};
    });
    EXPECT_EQ(out.ids(), std::vector<int32_t>(min_tokens, 1)) << min_tokens;
    EXPECT_EQ(out.finish(), FinishReason::stop);
    EXPECT_EQ(out.events.back().generated_tokens, min_tokens + 1);
  }
  EXPECT_THROW(run_on_table({3.0f, 2.0f, 0.0f, 0.0f},
                            [](RequestOptions& o) {
                              o.max_new_tokens = 2;
                              o.min_tokens = 3;
                            }),
               Error);
}

// The queue holds max_queue requests beyond the free running slots: with one slot and a queue of
// 2, three requests submitted together are taken (one to run) and a fourth is refused; once one
// runs, the queue has room for two behind it again, not three.
TEST(Engine, FullQueueRefusesWithEngineFull) {
  const Model model = testing::random_model(tiny_config(AttentionKind::baseline), 1);
  EngineOptions o;
  o.max_queue = 2;
  o.max_running = 1;
  Engine engine(model, nullptr, o);
  std::vector<Stream> s(6);
  for (int i = 0; i < 3; ++i) testing::submit_recorded(engine, sampled_request({1, 2, 3}, 4, i + 1), s[i]);
  EXPECT_THROW(testing::submit_recorded(engine, sampled_request({1, 2, 3}, 4, 4), s[3]), EngineFull);
  ASSERT_TRUE(engine.step());  // one runs, two wait
  EXPECT_THROW(testing::submit_recorded(engine, sampled_request({1, 2, 3}, 4, 5), s[4]), EngineFull);
  engine.run_until_idle();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s[i].finish(), FinishReason::length);
  EXPECT_TRUE(s[3].events.empty());
  EXPECT_TRUE(s[4].events.empty());
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// Cancelled while waiting and while decoding (from its own callback, after 3 tokens): each ends
// with `cancelled` and nothing after it, and every block goes back.
TEST(Engine, CancelWhileWaitingAndWhileDecoding) {
  const Model model = testing::random_model(tiny_config(AttentionKind::diff), 2);
  EngineOptions o;
  o.max_running = 1;
  Engine engine(model, nullptr, o);
  Rng rng(1);
  Stream decoding, waiting, after;
  Request a = sampled_request(random_tokens(rng, 4, 96), 100, 1);
  Engine::RequestId a_id = 0;
  a.on_event = [&](const TokenEvent& e) {
    decoding.events.push_back(e);
    if (decoding.events.size() == 3) engine.cancel(a_id);
  };
  a_id = engine.submit(a);
  const auto c = testing::submit_recorded(engine, sampled_request(random_tokens(rng, 10, 96), 10, 3), waiting);
  testing::submit_recorded(engine, sampled_request(random_tokens(rng, 10, 96), 10, 4), after);
  engine.cancel(c);  // still waiting (max_running 1)
  engine.run_until_idle();
  EXPECT_EQ(decoding.finish(), FinishReason::cancelled);
  EXPECT_EQ(decoding.ids().size(), 3u);
  EXPECT_EQ(waiting.finish(), FinishReason::cancelled);
  EXPECT_TRUE(waiting.ids().empty());
  EXPECT_EQ(after.finish(), FinishReason::length);
  engine.cancel(a_id);  // finished already: ignored
  engine.run_until_idle();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  EXPECT_EQ(engine.stats().finished[static_cast<int>(FinishReason::cancelled)], 2);
}

// An id that was never handed out cancels nothing, not even the request that gets it next.
TEST(Engine, CancelOfAnIdNotYetHandedOutIsIgnored) {
  const Model model = testing::random_model(tiny_config(AttentionKind::diff), 2);
  Engine engine(model, nullptr, EngineOptions{});
  for (int i = 0; i < 3; ++i) engine.cancel(0), engine.cancel(1), engine.cancel(1u << 20);
  Stream s;
  ASSERT_EQ(testing::submit_recorded(engine, sampled_request({1, 2, 3}, 4, 1), s), 1u);
  engine.run_until_idle();
  EXPECT_EQ(s.finish(), FinishReason::length);
  EXPECT_EQ(s.ids().size(), 4u);
}

// A cancel that lands while a prompt is halfway through its chunks, from the callback of another
// request (the engine's own thread).
TEST(Engine, CancelFromACallbackMidPrefill) {
  const Model model = testing::random_model(tiny_config(AttentionKind::diff2), 2);
  EngineOptions o;
  o.max_batch_tokens = 16;
  Engine engine(model, nullptr, o);
  Rng rng(4);
  Stream long_prompt;
  Engine::RequestId victim = 0;
  Request trigger = sampled_request(random_tokens(rng, 3, 96), 3, 2);
  trigger.on_event = [&](const TokenEvent&) { engine.cancel(victim); };
  engine.submit(trigger);  // first: its 3 rows and 13 of the victim's share the first step
  victim = testing::submit_recorded(engine, sampled_request(random_tokens(rng, 200, 96), 5, 1), long_prompt);
  engine.run_until_idle();
  EXPECT_EQ(long_prompt.finish(), FinishReason::cancelled);
  EXPECT_TRUE(long_prompt.ids().empty());
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// Two long prompts in a pool that holds one whole context but not both: the engine keeps moving
// (the newer one is preempted), and both end as they do alone.
TEST(Engine, TwoLongPromptsInATightPoolPreemptAndMatchAlone) {
  const Model model = testing::random_model(tiny_config(AttentionKind::diff), 8);
  EngineOptions o;
  o.kv_block_tokens = 16;
  o.kv_tokens = 320;
  o.max_batch_tokens = 33;
  Engine engine(model, nullptr, o);
  Rng rng(2);
  const Request a = sampled_request(random_tokens(rng, 300, 96), 8, 1),
                b = sampled_request(random_tokens(rng, 290, 96), 8, 2);
  Stream sa, sb;
  testing::submit_recorded(engine, a, sa);
  testing::submit_recorded(engine, b, sb);
  for (int steps = 0; engine.step(); ++steps) ASSERT_LT(steps, 1000) << "no progress";
  EXPECT_GT(engine.stats().preemptions, 0);
  EngineOptions alone_options = o;
  alone_options.kv_tokens = 0;
  expect_same_stream(sa, alone(model, a, alone_options), "first prompt");
  expect_same_stream(sb, alone(model, b, alone_options), "second prompt");
}

TEST(KvPool, ReferenceCountsPrefixLookupAndLruEviction) {
  const model::ModelConfig c = tiny_config(AttentionKind::baseline);
  KvPool pool(backends::cpu_backend(), c, KvStorage::bf16, 16, 3, OptionSpelling::flag);
  std::vector<int32_t> t1(16, 1), t2(16, 2);
  const int32_t a = pool.allocate(), b = pool.allocate();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  const uint64_t ka = KvPool::chain_key(0, t1), kb = KvPool::chain_key(ka, t2);
  pool.register_block(a, ka, -1, t1);
  pool.register_block(b, kb, a, t2);
  EXPECT_EQ(pool.lookup(ka, -1, t2), -1);  // other tokens under the key: no match
  pool.release(b);
  pool.release(a);
  EXPECT_EQ(pool.used(), 0);
  EXPECT_EQ(pool.cached(), 2);
  EXPECT_EQ(pool.lookup(ka, -1, t1), a);  // back from the evictable list
  EXPECT_EQ(pool.used(), 1);
  EXPECT_EQ(pool.allocate(), 2);  // the free block first
  EXPECT_EQ(pool.allocate(), b);  // then the least recently used cached one, dropped from the cache
  EXPECT_EQ(pool.cached(), 1);
  EXPECT_EQ(pool.allocate(), -1);
  EXPECT_EQ(pool.lookup(kb, a, t2), -1);
  for (int32_t x : {0, 1, 2}) pool.release(x);
  EXPECT_EQ(pool.used(), 0);
  EXPECT_THROW(pool.release(0), Error);
}

// Arrivals over time, random prompt and output lengths, shared prefixes, cancellations, in a pool
// that must preempt: every step keeps the pool's invariants, and every finished request equals
// the same request alone.
TEST(Engine, SeededRandomWorkloadMatchesEachRequestAlone) {
  for (const std::string& device : backends::device_names())
    for (size_t variant = 0; variant <= std::size(kKinds); ++variant) {
      const bool hybrid = variant == std::size(kKinds);  // and a hybrid stack
      const AttentionKind kind = hybrid ? AttentionKind::diff : kKinds[variant];
      if (device != "cpu" && !hybrid && kind != AttentionKind::diff2) continue;  // diff2 and the hybrid on slow devices
      const std::string name = hybrid ? "hybrid" : kernels::attention_kind_name(kind);
      SCOPED_TRACE(device + " " + name);
      Model model = testing::random_model(hybrid ? testing::small_hybrid_config() : tiny_config(kind), 21);
      model.move_to(backends::open_backend(device));
      EngineOptions o;
      o.kv_block_tokens = 16;
      o.kv_tokens = 256;
      o.max_batch_tokens = 24;
      o.max_running = 6;
      Engine engine(model, nullptr, o);
      const int arrivals = device == "cpu" ? 40 : 16;  // lavapipe's steps are slow
      Rng rng(static_cast<uint64_t>(kind) + 17 + (hybrid ? 100 : 0));
      const std::vector<int32_t> preamble = random_tokens(rng, 48, 96);
      std::vector<Request> requests;
      std::vector<std::unique_ptr<Stream>> streams;
      std::vector<Engine::RequestId> ids;
      std::vector<bool> cancelled;
      int64_t steps = 0;
      for (int arrival = 0; arrival < arrivals || engine.step(); ++arrival) {
        if (arrival < arrivals) {
          std::vector<int32_t> p = random_tokens(rng, 1 + rng.below(90), 96);
          if (rng.below(2)) p.insert(p.begin(), preamble.begin(), preamble.end());
          requests.push_back(sampled_request(p, 1 + rng.below(40), arrival));
          streams.push_back(std::make_unique<Stream>());
          ids.push_back(testing::submit_recorded(engine, requests.back(), *streams.back()));
          cancelled.push_back(rng.below(8) == 0);
        }
        // A few steps between arrivals; a cancel lands some steps after its request arrived.
        for (uint64_t k = rng.below(4); k > 0; --k, ++steps) engine.step();
        if (arrival >= 3 && arrival < arrivals + 3 && cancelled[arrival - 3]) engine.cancel(ids[arrival - 3]);
        const EngineStats st = engine.stats();
        ASSERT_LE(st.kv_blocks_used, st.kv_blocks);
        ASSERT_LE(st.running, o.max_running);
      }
      const EngineStats st = engine.stats();
      EXPECT_EQ(st.kv_blocks_used, 0);
      if (!hybrid) {
        EXPECT_GT(st.prefix_hit_tokens, 0);
      }
      for (size_t i = 0; i < requests.size(); ++i) {
        if (cancelled[i]) continue;
        EngineOptions single = o;
        single.kv_tokens = 0;
        expect_same_stream(*streams[i], alone(model, requests[i], single), name + " request " + std::to_string(i));
      }
      EXPECT_GT(st.preemptions, 0) << name;
      EXPECT_GT(steps, arrivals);
    }
}

}  // namespace
}  // namespace difftx::infer
