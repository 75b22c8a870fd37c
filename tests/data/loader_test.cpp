// The loader: windows are exact slices of the token stream (across shard boundaries), random
// windows are a pure function of (seed, step, global row), so every split of a global batch
// into ranks and micro-batches reads the same rows, sequential windows cover the split once in
// order, the state survives JSON, and bad datasets are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>

#include "core/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/prepare.h"
#include "data/shard.h"
#include "data_fixtures.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using difftx::testing::error_of;

// A dataset whose token at stream position i is i (vocab larger than every position), cut
// into shards of the given sizes, for the "train" and "val" splits alike.
void write_dataset(const std::filesystem::path& dir, const std::vector<int64_t>& shard_sizes,
                   int64_t vocab) {
  std::filesystem::create_directories(dir);
  nlohmann::json meta = {{"format", "difftx-dataset"}, {"version", 1},
                         {"tokenizer", {{"vocab_size", vocab}, {"end_of_text", 0}}}};
  for (const std::string split : {"train", "val"}) {
    int64_t next = 0;
    nlohmann::json shards = nlohmann::json::array();
    for (size_t s = 0; s < shard_sizes.size(); ++s) {
      std::vector<int32_t> ids(shard_sizes[s]);
      for (auto& id : ids) id = static_cast<int32_t>(next++);
      const std::string name = shard_file_name(split, static_cast<int64_t>(s));
      ShardWriter w(dir / name, vocab);
      w.append(ids.data(), ids.size());
      w.commit();
      shards.push_back({{"file", name}, {"tokens", shard_sizes[s]}});
    }
    meta["splits"][split] = {{"documents", 1}, {"bytes", next}, {"tokens", next}, {"shards", shards}};
  }
  io::write_file_atomically(dir / kMetadataFile, meta.dump());
}

TEST(Loader, RandomWindowsAreStreamSlicesAcrossShards) {
  testing::TempDir dir;
  write_dataset(dir.path(), {37, 5, 100, 61}, 100000);  // uint32 shards, awkward boundaries
  const int64_t B = 4, T = 16;
  TokenLoader loader(dir.path(), "train", {.batch = B, .seq_len = T, .seed = 42});
  EXPECT_TRUE(loader.is_random());
  EXPECT_EQ(loader.tokens(), 203);
  std::vector<int32_t> in(B * T), tg(B * T);
  for (int64_t step = 0; step < 50; ++step) {
    EXPECT_EQ(loader.next(in.data(), tg.data()), B);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t start = loader.window_start(step, b);
      ASSERT_GE(start, 0);
      ASSERT_LE(start + T + 1, 203);
      for (int64_t t = 0; t < T; ++t) {
        ASSERT_EQ(in[b * T + t], start + t);
        ASSERT_EQ(tg[b * T + t], start + t + 1);
      }
    }
  }
  EXPECT_EQ(loader.state().step, 50);
}

TEST(Loader, RandomWindowsDependOnSeedAndResumeFromTheStep) {
  testing::TempDir dir;
  write_dataset(dir.path(), {5000}, 8192);
  const int64_t B = 3, T = 32;
  const LoaderOptions o{.batch = B, .seq_len = T, .seed = 7};
  TokenLoader a(dir.path(), "train", o), b(dir.path(), "train", o),
      other(dir.path(), "train", {.batch = B, .seq_len = T, .seed = 8});
  std::vector<int32_t> ia(B * T), ta(B * T), ib(B * T), tb(B * T);
  std::vector<std::vector<int32_t>> run;
  for (int step = 0; step < 10; ++step) {
    a.next(ia.data(), ta.data());
    run.push_back(ia);
  }
  int differ = 0;
  for (int step = 0; step < 10; ++step) differ += a.window_start(step, 0) != other.window_start(step, 0);
  EXPECT_GE(differ, 8) << "another seed should draw other windows";
  // Resume at step 6 from the saved JSON state: the same batches as the uninterrupted run.
  TokenLoader c(dir.path(), "train", o);
  LoaderState at6;
  at6.step = 6;
  const nlohmann::json saved = at6;  // through nlohmann's to_json
  c.restore(saved);
  for (int step = 6; step < 10; ++step) {
    c.next(ib.data(), tb.data());
    EXPECT_EQ(ib, run[step]) << "step " << step;
  }
  // Windows spread over the whole split.
  std::set<int64_t> starts;
  for (int step = 0; step < 200; ++step) starts.insert(b.window_start(step, 0));
  EXPECT_GT(starts.size(), 190u);
  EXPECT_LT(*starts.begin(), 500);
  EXPECT_GT(*starts.rbegin(), 4400);
}

// The start of every row of `steps` global batches of G rows, indexed [step][global row], read
// by `world` ranks drawing `micro` micro-batches of G / (world x micro) rows per step, from
// `first_step` on; checks that each row is read exactly once.
std::vector<std::vector<int64_t>> global_batches(const std::filesystem::path& dir, int64_t G, int world,
                                                 int64_t micro, int64_t first_step, int64_t steps) {
  const int64_t T = 20, B = G / (world * micro);
  std::vector<std::vector<int64_t>> starts(steps, std::vector<int64_t>(G, -1));
  for (int r = 0; r < world; ++r) {
    TokenLoader loader(dir, "train", {.batch = B, .seq_len = T, .seed = 5, .rank = r, .world_size = world,
                                      .micro_batches = micro});
    loader.restore(LoaderState{first_step, 0});
    std::vector<int32_t> in(B * T), tg(B * T);
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t j = 0; j < micro; ++j) {
        loader.next(in.data(), tg.data());
        for (int64_t b = 0; b < B; ++b) {
          EXPECT_EQ(loader.global_row(j, b), (j * world + r) * B + b);
          int64_t& slot = starts[s][loader.global_row(j, b)];
          EXPECT_EQ(slot, -1) << "global row read twice";
          slot = in[b * T];  // token i of the stream is i
        }
      }
      EXPECT_EQ(loader.state().step, first_step + s + 1);
    }
  }
  return starts;
}

TEST(Loader, EverySplitOfAGlobalBatchReadsTheSameRows) {
  testing::TempDir dir;
  write_dataset(dir.path(), {1000, 999, 1}, 100000);
  const int64_t G = 12;
  const auto one_rank = global_batches(dir.path(), G, 1, 1, 0, 6);
  for (const auto& [world, micro] : std::vector<std::pair<int, int64_t>>{{2, 1}, {3, 2}, {4, 3}, {1, 4}, {6, 1}})
    EXPECT_EQ(global_batches(dir.path(), G, world, micro, 0, 6), one_rank)
        << world << " ranks x " << micro << " micro-batches";
  // Resuming at step 2 on another number of ranks continues the same stream.
  EXPECT_EQ(global_batches(dir.path(), G, 3, 1, 2, 4),
            std::vector<std::vector<int64_t>>(one_rank.begin() + 2, one_rank.end()));
  // Rows draw from the whole split, independently.
  std::set<int64_t> distinct;
  for (const auto& step : one_rank) distinct.insert(step.begin(), step.end());
  EXPECT_GT(distinct.size(), 60u);
  EXPECT_LT(*distinct.begin(), 200);
  EXPECT_GT(*distinct.rbegin(), 1700);
}

TEST(Loader, StateIsOnlyTakenBetweenSteps) {
  testing::TempDir dir;
  write_dataset(dir.path(), {500}, 100000);
  TokenLoader loader(dir.path(), "train", {.batch = 2, .seq_len = 8, .micro_batches = 3});
  std::vector<int32_t> in(16), tg(16);
  loader.next(in.data(), tg.data());
  const std::string msg = error_of([&] { loader.state(); });
  EXPECT_NE(msg.find("after 1 of the 3 micro-batches of step 1"), std::string::npos) << msg;
  loader.next(in.data(), tg.data());
  loader.next(in.data(), tg.data());
  EXPECT_EQ(loader.state().step, 1);
}

TEST(Loader, SequentialWindowsCoverTheSplitOnceInOrder) {
  testing::TempDir dir;
  write_dataset(dir.path(), {50, 77, 3}, 100000);  // 130 tokens: 8 windows of T=16
  const int64_t B = 3, T = 16;
  TokenLoader loader(dir.path(), "val", {.batch = B, .seq_len = T});
  EXPECT_FALSE(loader.is_random());
  EXPECT_EQ(loader.windows(), 8);
  std::vector<int32_t> in(B * T), tg(B * T), targets_seen;
  std::vector<int64_t> rows;
  while (int64_t n = loader.next(in.data(), tg.data())) {
    rows.push_back(n);
    for (int64_t i = 0; i < n * T; ++i) {
      EXPECT_EQ(in[i] + 1, tg[i]);
      targets_seen.push_back(tg[i]);
    }
    for (int64_t i = n * T; i < B * T; ++i) {
      EXPECT_EQ(in[i], 0);
      EXPECT_EQ(tg[i], kIgnoreTarget);
    }
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{3, 3, 2}));
  std::vector<int32_t> want(8 * T);
  for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<int32_t>(i + 1);
  EXPECT_EQ(targets_seen, want);  // every target once, in stream order
  EXPECT_EQ(loader.next(in.data(), tg.data()), 0);
  loader.rewind();
  EXPECT_EQ(loader.next(in.data(), tg.data()), 3);
  EXPECT_EQ(in[0], 0);
}

TEST(Loader, SequentialRanksSplitTheWindowsWithoutOverlap) {
  testing::TempDir dir;
  write_dataset(dir.path(), {401}, 100000);  // 400 / 8 = 50 windows
  const int64_t B = 4, T = 8, world = 3;
  for (const int64_t max_windows : {0, 20}) {
    std::vector<int32_t> firsts;
    for (int r = 0; r < world; ++r) {
      TokenLoader loader(dir.path(), "val",
                         {.batch = B, .seq_len = T, .rank = r, .world_size = world, .max_windows = max_windows});
      std::vector<int32_t> in(B * T), tg(B * T);
      while (int64_t n = loader.next(in.data(), tg.data()))
        for (int64_t b = 0; b < n; ++b) firsts.push_back(in[b * T]);
    }
    ASSERT_EQ(firsts.size(), max_windows ? 20u : 50u);
    for (size_t k = 0; k < firsts.size(); ++k) EXPECT_EQ(firsts[k], static_cast<int32_t>(k * T));
  }
}

TEST(Loader, StateRoundTripsThroughJsonAndRejectsGarbage) {
  const LoaderState s{12, 34};
  EXPECT_EQ(LoaderState::from_json(s.to_json()), s);
  nlohmann::json j = s;
  EXPECT_EQ(j.get<LoaderState>(), s);
  EXPECT_EQ(j.dump(), R"({"position":34,"step":12})");
  for (const char* bad : {R"({"step": 1})", R"({"step": -1, "position": 0})", R"({"step": "x", "position": 0})", "[]"}) {
    const std::string msg = error_of([&] { LoaderState::from_json(nlohmann::json::parse(bad)); });
    EXPECT_NE(msg.find("is missing or not a non-negative integer"), std::string::npos) << bad << ": " << msg;
  }
  testing::TempDir dir;
  write_dataset(dir.path(), {100}, 1000);
  TokenLoader seq(dir.path(), "val", {.batch = 2, .seq_len = 9});  // 11 windows
  const std::string msg = error_of([&] { seq.restore(LoaderState{0, 12}); });
  EXPECT_NE(msg.find("restored position 12 is beyond the 11 windows"), std::string::npos) << msg;
}

TEST(Loader, BadDatasetsAreClearErrors) {
  testing::TempDir dir;
  const LoaderOptions o{.batch = 1, .seq_len = 8};
  std::string msg = error_of([&] { TokenLoader l(dir / "missing", "train", o); });
  EXPECT_NE(msg.find("missing: the dataset directory does not exist"), std::string::npos) << msg;
  { std::ofstream(dir / "a-file") << "x"; }
  msg = error_of([&] { TokenLoader l(dir / "a-file", "train", o); });
  EXPECT_NE(msg.find("a-file: the dataset directory must be a directory, and this is a file"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l("", "train", o); });
  EXPECT_NE(msg.find("the dataset directory is named by an empty path"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir.path(), "train", o); });
  EXPECT_NE(msg.find("no metadata.json"), std::string::npos) << msg;

  write_dataset(dir / "d", {30, 10}, 1000);
  msg = error_of([&] { TokenLoader l(dir / "d", "test", o); });
  EXPECT_NE(msg.find("no split 'test'"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir / "d", "train", {.batch = 1, .seq_len = 40}); });
  EXPECT_NE(msg.find("split 'train' (train_0000.bin, train_0001.bin) holds 40 tokens, fewer than the T+1 = 41"),
            std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir / "d", "val", {.batch = 1, .seq_len = 15, .rank = 0, .world_size = 3}); });
  EXPECT_NE(msg.find("has 2 windows of T+1 = 16 tokens, none for rank 0 of 3"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir / "d", "train", {.batch = 1, .seq_len = 8, .rank = 3, .world_size = 3}); });
  EXPECT_NE(msg.find("rank 3 is outside [0, world_size 3)"), std::string::npos) << msg;
  // A micro-batch's buffers hold batch x seq_len tokens: a product past the bound (or int64) is refused.
  msg = error_of([&] { TokenLoader l(dir / "d", "val", {.batch = int64_t{1} << 62, .seq_len = 8}); });
  EXPECT_NE(msg.find("batch 4611686018427387904 x seq_len 8 exceeds the 268435456 tokens"), std::string::npos) << msg;

  // Truncated shard, and a shard with an id outside the vocabulary: named with the position.
  std::filesystem::resize_file(dir / "d" / "train_0001.bin", 64 + 7);
  msg = error_of([&] { TokenLoader l(dir / "d", "train", o); });
  EXPECT_NE(msg.find("train_0001.bin: truncated or oversized shard"), std::string::npos) << msg;
  std::string bytes = io::read_whole_file(dir / "d" / "val_0000.bin");
  const uint16_t bad = 1000;
  std::memcpy(bytes.data() + 64 + 2 * 17, &bad, 2);
  io::write_file_atomically(dir / "d" / "val_0000.bin", bytes);
  msg = error_of([&] { TokenLoader l(dir / "d", "val", o); });
  EXPECT_NE(msg.find("val_0000.bin: token id 1000 at position 17 is not below the vocabulary size 1000"),
            std::string::npos) << msg;
}

TEST(Loader, ReadsWhatPrepareWrote) {
  testing::TempDir dir;
  Rng rng(6);
  PrepareOptions o;
  for (int i = 0; i < 12; ++i)
    o.corpus.push_back(dir.write("c/" + std::to_string(i) + ".txt", testing::random_text(rng, 3000)).string());
  o.vocab_size = 400;
  o.out = dir / "out";
  o.shard_tokens = 2000;
  o.progress = false;
  prepare_dataset(o);
  EXPECT_EQ(tokenizer_files(o.out).size(), 2u);
  TokenLoader train(o.out, "train", {.batch = 4, .seq_len = 64}), val(o.out, "val", {.batch = 4, .seq_len = 64});
  EXPECT_EQ(train.vocab_size(), 400);
  std::vector<int32_t> in(4 * 64), tg(4 * 64);
  EXPECT_EQ(train.next(in.data(), tg.data()), 4);
  for (int32_t id : in) EXPECT_TRUE(id >= 0 && id < 400);
  int64_t windows = 0;
  while (int64_t n = val.next(in.data(), tg.data())) windows += n;
  EXPECT_EQ(windows, (val.tokens() - 1) / 64);
}

}  // namespace
}  // namespace difftx::data
