// The engine's scheduler (infer/scheduler.h) through the KV-cache manager, with a fake model
// output in place of the forward: the rows each step runs under the token budget, preemption in
// a tight pool, prefix reuse and cancellations over a seeded workload, a bad row of logits ending
// only its request, and the scheduler over hybrid layer groups (full, sliding window, recurrent,
// shared), which no model difftx runs yet.
//
// The fake forward keeps the tokens themselves as the "keys and values": each row's token goes
// into the slot its tables give, and a row that wants logits reads its sequence's tokens back
// through its tables and puts all the weight on a hash of them. A stream is then the one
// next_token() predicts only if every row found its own sequence's tokens where the tables say
// they are.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "core/hash.h"
#include "core/rng.h"
#include "infer/block_pool.h"
#include "infer/sampling_stage.h"
#include "infer/scheduler.h"
#include "support/engine_runs.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

using testing::Stream;

constexpr int64_t kSchedulerVocab = 64;
constexpr int32_t kPoison = 63;  // a prompt that starts with it gets a NaN logit

uint64_t chain(uint64_t h, int32_t token) { return mix64(h ^ static_cast<uint32_t>(token)); }
constexpr uint64_t kSeed = 0x5eed;

// The token the fake model gives after these tokens.
int32_t next_token(std::span<const int32_t> tokens) {
  uint64_t h = kSeed;
  for (int32_t t : tokens) h = chain(h, t);
  return static_cast<int32_t>(h % kSchedulerVocab);
}

// The stream a greedy request gets from the fake model.
std::vector<int32_t> expected_stream(std::vector<int32_t> tokens, int64_t new_tokens) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < new_tokens; ++i) {
    out.push_back(next_token(tokens));
    tokens.push_back(out.back());
  }
  return out;
}

class FakeForward {
 public:
  FakeForward(std::vector<KvCacheGroup> groups, int64_t block_tokens)
      : groups_(std::move(groups)), P_(block_tokens) {}

  const float* operator()(const StepPlan& plan) {
    steps.emplace_back();
    for (const BatchRow& r : plan.rows) steps.back().emplace_back(plan.slices[r.table].seq->id, r.position);
    gemv_rows.push_back(plan.gemv_rows);
    check_rows(plan);
    for (const BatchRow& r : plan.rows)
      for (size_t g = 0; g < groups_.size(); ++g)
        if (groups_[g].kind == CacheKind::full || groups_[g].kind == CacheKind::sliding_window)
          store_[slot(plan.tables[g][r.table], r.position)] = r.token;
    // A recurrent state runs over each slice's positions in order, from a fresh state at the
    // sequence's first position.
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].kind == CacheKind::recurrent)
        for (size_t t = 0; t < plan.slices.size(); ++t) {
          const Slice& sl = plan.slices[t];
          EXPECT_EQ(plan.tables[g][t].size(), 1u);
          uint64_t& state = states_[plan.tables[g][t][0]];
          if (sl.first == 0) state = kSeed;
          for (int64_t p = sl.first; p < sl.first + sl.count; ++p) state = chain(state, sl.seq->tokens[p]);
        }
    logits_.clear();
    for (const BatchRow& r : plan.rows)
      if (r.logits) append_logits(plan, r);
    return logits_.data();
  }

  using Rows = std::vector<std::pair<uint64_t, int64_t>>;  // (sequence id, position) of each row
  std::vector<Rows> steps;
  std::vector<int64_t> gemv_rows;

 private:
  int64_t slot(std::span<const int32_t> table, int64_t position) const {
    EXPECT_LT(position / P_, static_cast<int64_t>(table.size())) << "no block for position " << position;
    const int32_t block = table[position / P_];
    EXPECT_GE(block, 0) << "position " << position << " is in a block given back";
    return block * P_ + position % P_;
  }

  int32_t stored(std::span<const int32_t> table, int64_t position) const {
    const auto it = store_.find(slot(table, position));
    return it == store_.end() ? -1 : it->second;
  }

  // Each slice's rows are its positions with their tokens, the generated ones first (the GEMV
  // rows), each kind in order; only a sequence's last token wants logits.
  void check_rows(const StepPlan& plan) const {
    std::vector<std::vector<int64_t>> seen(plan.slices.size());
    for (int64_t i = 0; i < static_cast<int64_t>(plan.rows.size()); ++i) {
      const BatchRow& r = plan.rows[i];
      const Sequence& s = *plan.slices[r.table].seq;
      EXPECT_EQ(r.token, s.tokens[r.position]);
      EXPECT_EQ(i < plan.gemv_rows, r.position >= s.prompt_tokens);
      EXPECT_EQ(r.logits, r.position + 1 == static_cast<int64_t>(s.tokens.size()));
      seen[r.table].push_back(r.position);
    }
    for (size_t t = 0; t < plan.slices.size(); ++t) {
      const Slice& sl = plan.slices[t];
      std::vector<int64_t> want;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t p = sl.first; p < sl.first + sl.count; ++p)
          if ((p >= sl.seq->prompt_tokens) == (pass == 0)) want.push_back(p);
      EXPECT_EQ(seen[t], want);
    }
  }

  // The row's sequence read back through every group: the full groups' tokens [0, position],
  // the sliding windows' last `window` of them, the recurrent state carried over from the
  // sequence's earlier steps (from its first position: a fresh state), a shared group's source.
  void append_logits(const StepPlan& plan, const BatchRow& r) {
    const Slice& sl = plan.slices[r.table];
    std::vector<int32_t> tokens;
    for (size_t g = 0; g < groups_.size(); ++g) {
      const std::span<const int32_t> table = plan.tables[g][r.table];
      switch (groups_[g].kind) {
        case CacheKind::full:
          if (!tokens.empty()) break;
          for (int64_t p = 0; p <= r.position; ++p) tokens.push_back(stored(table, p));
          break;
        case CacheKind::sliding_window:
          for (int64_t p = std::max<int64_t>(0, r.position - groups_[g].window + 1); p <= r.position; ++p)
            EXPECT_EQ(stored(table, p), sl.seq->tokens[p]) << "sliding window, position " << p;
          break;
        case CacheKind::shared:
          EXPECT_EQ(table.data(), plan.tables[groups_[g].source][r.table].data());
          break;
        case CacheKind::recurrent: {
          uint64_t want = kSeed;
          for (int64_t p = 0; p <= r.position; ++p) want = chain(want, sl.seq->tokens[p]);
          EXPECT_EQ(states_[table[0]], want) << "recurrent state of sequence " << sl.seq->id;
          break;
        }
      }
    }
    const size_t at = logits_.size();
    logits_.resize(at + kSchedulerVocab, 0.0f);
    if (tokens.empty()) tokens.assign(sl.seq->tokens.begin(), sl.seq->tokens.begin() + r.position + 1);
    logits_[at + next_token(tokens)] = 1.0f;
    if (sl.seq->tokens[0] == kPoison) logits_[at + 5] = std::numeric_limits<float>::quiet_NaN();
  }

  std::vector<KvCacheGroup> groups_;
  int64_t P_;
  std::unordered_map<int64_t, int32_t> store_;
  std::unordered_map<int32_t, uint64_t> states_;
  std::vector<float> logits_;
};

model::Model fake_shapes() {
  testing::SmallShape shape;
  shape.vocab_size = kSchedulerVocab;
  shape.layers = 1;
  shape.max_positions = 512;
  return testing::random_model(testing::small_config(kernels::AttentionKind::baseline, shape), 1);
}

Request greedy(std::vector<int32_t> prompt, int64_t new_tokens) {
  Request r{std::move(prompt), {}, {}, {}};
  r.options.sampling.temperature = 0;
  r.options.max_new_tokens = new_tokens;
  return r;
}

std::vector<int32_t> poison_free_tokens(Rng& rng, int64_t n) {
  std::vector<int32_t> t(n);
  for (auto& id : t) id = static_cast<int32_t>(rng.below(kSchedulerVocab - 1));  // never kPoison
  return t;
}

// An engine whose steps run through a FakeForward.
struct FakeEngine {
  explicit FakeEngine(const EngineOptions& o)
      : fake(kv_cache_groups(model.config), o.kv_block_tokens),
        engine(model, nullptr, o, [this](const StepPlan& plan) { return fake(plan); }) {}
  model::Model model = fake_shapes();
  FakeForward fake;
  Engine engine;
};

EngineOptions small_pool(int64_t kv_tokens, int64_t max_batch_tokens) {
  EngineOptions o;
  o.kv_block_tokens = 16;
  o.kv_tokens = kv_tokens;
  o.max_batch_tokens = max_batch_tokens;
  return o;
}

// Budget 16: the first step admits A's 10-token prompt and 6 of B's; then A's next token comes
// first (the GEMV row) and B's prompt takes the rest of the budget.
TEST(Scheduler, StepsFollowTheBudgetOrder) {
  FakeEngine fe(small_pool(0, 16));
  Engine& engine = fe.engine;
  Rng rng(1);
  const Request a = greedy(poison_free_tokens(rng, 10), 3), b = greedy(poison_free_tokens(rng, 30), 2);
  Stream sa, sb;
  const auto ida = testing::submit_recorded(engine, a, sa), idb = testing::submit_recorded(engine, b, sb);
  engine.run_until_idle();
  EXPECT_EQ(sa.ids(), expected_stream(a.prompt, 3));
  EXPECT_EQ(sb.ids(), expected_stream(b.prompt, 2));
  const auto span = [](uint64_t id, int64_t first, int64_t end) {
    FakeForward::Rows out;
    for (int64_t p = first; p < end; ++p) out.emplace_back(id, p);
    return out;
  };
  const auto cat = [](FakeForward::Rows x, const FakeForward::Rows& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const FakeForward& fake = fe.fake;
  ASSERT_EQ(fake.steps.size(), 4u);
  EXPECT_EQ(fake.steps[0], cat(span(ida, 0, 10), span(idb, 0, 6)));
  EXPECT_EQ(fake.steps[1], cat(span(ida, 10, 11), span(idb, 6, 21)));
  EXPECT_EQ(fake.steps[2], cat(span(ida, 11, 12), span(idb, 21, 30)));
  EXPECT_EQ(fake.steps[3], span(idb, 30, 31));
  EXPECT_EQ(fake.gemv_rows, (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(engine.stats().steps, 4);
  EXPECT_EQ(engine.stats().prompt_tokens, 40);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// Two long prompts in a pool that holds one whole context: the newer is preempted, recomputed,
// and both streams are the fake model's.
TEST(Scheduler, TightPoolPreemptsTheNewerAndRecomputes) {
  FakeEngine fe(small_pool(320, 33));
  Engine& engine = fe.engine;
  Rng rng(2);
  const Request a = greedy(poison_free_tokens(rng, 300), 8), b = greedy(poison_free_tokens(rng, 290), 8);
  Stream sa, sb;
  testing::submit_recorded(engine, a, sa);
  testing::submit_recorded(engine, b, sb);
  for (int steps = 0; engine.step(); ++steps) ASSERT_LT(steps, 1000) << "no progress";
  EXPECT_GT(engine.stats().preemptions, 0);
  EXPECT_EQ(sa.ids(), expected_stream(a.prompt, 8));
  EXPECT_EQ(sb.ids(), expected_stream(b.prompt, 8));
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// Two sequences one step in, in a pool of `blocks` blocks of 4 tokens: A with 3 prompt tokens
// (its next row in its block), B with 8 (its next row at position 8, in a new block).
struct TwoSequences {
  explicit TwoSequences(int32_t blocks)
      : pool(blocks, 4), kv({{CacheKind::full, {0}, 0, -1}}, pool, 0, false), scheduler(kv, 64, 4, 64, counters) {
    Rng rng(3);
    scheduler.waiting().push_back(std::make_unique<Sequence>(1, greedy(poison_free_tokens(rng, 3), 10), 64));
    scheduler.waiting().push_back(std::make_unique<Sequence>(2, greedy(poison_free_tokens(rng, 8), 10), 64));
    scheduler.schedule();
    for (auto& s : scheduler.running()) s->tokens.push_back(5);
    scheduler.commit();
  }
  // The next step's plan, A drafting `draft`.
  const StepPlan& next_step(std::vector<int32_t> draft) {
    scheduler.running()[0]->draft.tokens = std::move(draft);
    return scheduler.schedule();
  }

  BlockPool pool;
  KvCacheManager kv;
  EngineStats counters;
  Scheduler scheduler;
};

// A draft's rows come from what is left once every running sequence has its next token's slot: in
// a pool of 4 blocks, A drafting 3 tokens would take the one free block that B's next row needs.
// A's draft is dropped; nobody is preempted. With a block more, the draft's rows follow A's token.
TEST(Scheduler, ADraftNeverTakesTheSlotOfAnothersNextToken) {
  for (const std::vector<int32_t>& draft : {std::vector<int32_t>{}, std::vector<int32_t>{7, 7, 7}}) {
    TwoSequences tight(4);
    const StepPlan& plan = tight.next_step(draft);
    EXPECT_EQ(tight.counters.preemptions, 0) << draft.size();
    ASSERT_EQ(plan.slices.size(), 2u) << draft.size();
    EXPECT_EQ(plan.slices[0].count, 1);
    EXPECT_EQ(plan.slices[1].count, 1);
    EXPECT_TRUE(tight.scheduler.running()[0]->draft.tokens.empty());
  }
  TwoSequences roomy(5);
  const StepPlan& plan = roomy.next_step({7, 7, 7});
  ASSERT_EQ(plan.slices.size(), 2u);
  EXPECT_EQ(plan.slices[0].count, 4);
  EXPECT_EQ(plan.slices[0].lookahead, 3);
  EXPECT_EQ(plan.slices[1].count, 1);
}

// Arrivals, shared prefixes, cancellations and preemption: every request that was not cancelled
// streams what the fake model gives it, and the pool ends empty.
TEST(Scheduler, SeededWorkloadWithFakeOutputs) {
  EngineOptions o = small_pool(256, 24);
  o.max_running = 6;
  FakeEngine fe(o);
  Engine& engine = fe.engine;
  Rng rng(17);
  const std::vector<int32_t> preamble = poison_free_tokens(rng, 48);
  std::vector<Request> requests;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<Engine::RequestId> ids;
  std::vector<bool> cancelled;
  for (int arrival = 0; arrival < 60 || engine.step(); ++arrival) {
    if (arrival < 60) {
      std::vector<int32_t> p = poison_free_tokens(rng, 1 + rng.below(90));
      if (rng.below(2)) p.insert(p.begin(), preamble.begin(), preamble.end());
      requests.push_back(greedy(p, 1 + rng.below(40)));
      streams.push_back(std::make_unique<Stream>());
      ids.push_back(testing::submit_recorded(engine, requests.back(), *streams.back()));
      cancelled.push_back(rng.below(8) == 0);
    }
    for (uint64_t k = rng.below(4); k > 0; --k) engine.step();
    if (arrival >= 3 && arrival < 63 && cancelled[arrival - 3]) engine.cancel(ids[arrival - 3]);
    ASSERT_LE(engine.stats().kv_blocks_used, engine.stats().kv_blocks);
    ASSERT_LE(engine.stats().running, o.max_running);
  }
  const EngineStats st = engine.stats();
  EXPECT_EQ(st.kv_blocks_used, 0);
  EXPECT_GT(st.prefix_hit_tokens, 0);
  EXPECT_GT(st.preemptions, 0);
  for (size_t i = 0; i < requests.size(); ++i) {
    if (cancelled[i]) continue;
    EXPECT_EQ(streams[i]->ids(), expected_stream(requests[i].prompt, requests[i].options.max_new_tokens))
        << "request " << i;
    EXPECT_EQ(streams[i]->finish(), FinishReason::length) << "request " << i;
  }
}

// A NaN in one request's logits ends that request with an error naming the token; the request
// beside it goes on.
TEST(SamplingStage, ABadRowEndsOnlyItsRequest) {
  FakeEngine fe({});
  Engine& engine = fe.engine;
  Rng rng(3);
  std::vector<int32_t> poisoned = poison_free_tokens(rng, 20);
  poisoned[0] = kPoison;
  const Request good = greedy(poison_free_tokens(rng, 20), 6);
  Stream bad, fine;
  testing::submit_recorded(engine, greedy(poisoned, 6), bad);
  testing::submit_recorded(engine, good, fine);
  engine.run_until_idle();
  ASSERT_EQ(bad.finish(), FinishReason::error);
  EXPECT_NE(bad.events.back().error.find("logit of token 5"), std::string::npos) << bad.events.back().error;
  EXPECT_TRUE(bad.ids().empty());
  EXPECT_EQ(fine.ids(), expected_stream(good.prompt, 6));
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// A scored prompt (RequestOptions::prompt_logprobs) comes in chunks of at most the step's scored
// rows (5 here), every row giving logits, and takes no cached prefix; an unscored prompt beside it
// takes the rest of the budget, its last row alone giving logits.
TEST(Scheduler, ScoredPromptsComeInChunksOfTheScoredRows) {
  BlockPool pool(16, 16);
  KvCacheManager kv({{CacheKind::full, {0}, 0, -1}}, pool, 0, true);
  EngineStats counters;
  Scheduler scheduler(kv, 24, 4, 5, counters);
  Rng rng(3);
  Request a = greedy(poison_free_tokens(rng, 12), 1);
  a.options.prompt_logprobs = 0;
  scheduler.waiting().push_back(std::make_unique<Sequence>(1, a, kSchedulerVocab));
  scheduler.waiting().push_back(std::make_unique<Sequence>(2, greedy(poison_free_tokens(rng, 20), 1), kSchedulerVocab));
  // Each step's slices as (sequence, rows); a prompt's last row comes first, as a decode row.
  const std::vector<std::vector<std::pair<uint64_t, int64_t>>> steps = {{{1, 5}, {2, 19}}, {{2, 1}, {1, 5}}, {{1, 2}}};
  for (const auto& want : steps) {
    const StepPlan& plan = scheduler.schedule();
    ASSERT_EQ(plan.slices.size(), want.size());
    for (size_t t = 0; t < want.size(); ++t) {
      EXPECT_EQ(plan.slices[t].seq->id, want[t].first) << "slice " << t;
      EXPECT_EQ(plan.slices[t].count, want[t].second) << "slice " << t;
    }
    for (const BatchRow& r : plan.rows) {
      const Sequence& s = *plan.slices[r.table].seq;
      EXPECT_EQ(r.logits, s.id == 1 || r.position + 1 == s.prompt_tokens) << s.id << " at " << r.position;
    }
    scheduler.commit();
  }
  EXPECT_EQ(counters.prefix_lookup_tokens, 20);  // only the unscored prompt looked
}

// The scheduler over a hybrid model's groups (full attention, a sliding window of 20, recurrent
// state, a shared group reading the full one's pages), driven step by step as the engine does,
// in a pool tight enough to preempt: every row finds its sequence's tokens in the full and window
// blocks and its state carried over, and a window group holds only the blocks its rows read.
TEST(Scheduler, HybridGroupsThroughTheManager) {
  const std::vector<KvCacheGroup> groups = {{CacheKind::full, {1}, 0, -1},
                                            {CacheKind::sliding_window, {0, 2}, 20, -1},
                                            {CacheKind::recurrent, {3, 5}, 0, -1},
                                            {CacheKind::shared, {4}, 0, 0}};
  constexpr int64_t P = 16, kRunning = 4;
  BlockPool pool(24, P);
  KvCacheManager kv(groups, pool, kRunning, true);
  EXPECT_EQ(kv.prefix_cache(), PrefixCache::off_recurrent_state);
  EngineStats counters;
  Scheduler scheduler(kv, 24, kRunning, 24, counters);
  SamplingStage sampling(nullptr, kSchedulerVocab, kSchedulerVocab, 1000, counters);
  FakeForward fake(groups, P);
  Rng rng(5);
  std::vector<Request> requests;
  std::vector<std::unique_ptr<Stream>> streams;
  for (uint64_t id = 1; id <= 12; ++id) {
    requests.push_back(greedy(poison_free_tokens(rng, 1 + rng.below(80)), 1 + rng.below(30)));
    streams.push_back(std::make_unique<Stream>());
    Request r = requests.back();
    r.on_event = [s = streams.back().get()](const TokenEvent& e) { s->events.push_back(e); };
    scheduler.waiting().push_back(std::make_unique<Sequence>(id, std::move(r), kSchedulerVocab));
  }
  for (int steps = 0; !scheduler.running().empty() || !scheduler.waiting().empty(); ++steps) {
    ASSERT_LT(steps, 2000) << "no progress";
    const StepPlan& plan = scheduler.schedule();
    ASSERT_FALSE(plan.empty());
    // No block or state slot is in two sequences' tables (no prefix cache with recurrent state).
    std::vector<int32_t> held, slots;
    for (size_t t = 0; t < plan.slices.size(); ++t) {
      for (int g : {0, 1})
        for (int32_t b : plan.tables[g][t])
          if (b >= 0) held.push_back(b);
      slots.push_back(plan.tables[2][t][0]);
    }
    std::sort(held.begin(), held.end());
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(std::adjacent_find(held.begin(), held.end()), held.end());
    EXPECT_EQ(std::adjacent_find(slots.begin(), slots.end()), slots.end());
    // The window's blocks: those its rows read, [first - 19, first + count), and no more.
    for (size_t t = 0; t < plan.slices.size(); ++t) {
      const std::span<const int32_t> window = plan.tables[1][t];
      const int64_t reads = (plan.slices[t].count + 19 + P - 1) / P + 1;
      EXPECT_LE(std::count_if(window.begin(), window.end(), [](int32_t b) { return b >= 0; }), reads);
    }
    const float* logits = fake(plan);
    scheduler.commit();
    int64_t j = 0;
    std::vector<Sequence*> ended;
    for (const BatchRow& r : plan.rows)
      if (r.logits) {
        Sequence& s = *plan.slices[r.table].seq;
        if (sampling.advance(s, logits + j++ * kSchedulerVocab) != FinishReason::none) {
          kv.free(s.id);
          ended.push_back(&s);
        }
      }
    std::erase_if(scheduler.running(),
                  [&](const auto& s) { return std::find(ended.begin(), ended.end(), s.get()) != ended.end(); });
  }
  for (size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(streams[i]->ids(), expected_stream(requests[i].prompt, requests[i].options.max_new_tokens))
        << "request " << i;
  EXPECT_GT(counters.preemptions, 0);
  EXPECT_EQ(kv.used_blocks(), 0);
  EXPECT_EQ(kv.used_state_slots(), 0);
}

}  // namespace
}  // namespace difftx::infer
