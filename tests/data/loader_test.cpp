// The loader: windows are exact slices of the token stream (across shard boundaries), random
// windows are a pure function of (seed, step, rank, row) and stay in the rank's own part,
// sequential windows cover the split once in order, the state survives JSON, and bad
// datasets are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.h"
#include "data/dataset.h"
#include "data/file_io.h"
#include "data/loader.h"
#include "data/prepare.h"
#include "data/shard.h"
#include "data_fixtures.h"
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
  write_file_atomic(dir / kMetadataFile, meta.dump());
}

TEST(Loader, RandomWindowsAreStreamSlicesAcrossShards) {
  testing::TempDir dir;
  write_dataset(dir.path(), {37, 5, 100, 61}, 100000);  // uint32 shards, awkward boundaries
  const int64_t B = 4, T = 16;
  TokenLoader loader(dir.path(), "train", B, T, 42);
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
  TokenLoader a(dir.path(), "train", B, T, 7), b(dir.path(), "train", B, T, 7),
      other(dir.path(), "train", B, T, 8);
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
  TokenLoader c(dir.path(), "train", B, T, 7);
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

TEST(Loader, RanksDrawFromDisjointParts) {
  testing::TempDir dir;
  write_dataset(dir.path(), {1000, 999, 1}, 100000);
  const int64_t B = 8, T = 20, world = 3;
  std::vector<std::pair<int64_t, int64_t>> spans(world, {INT64_MAX, -1});
  for (int r = 0; r < world; ++r) {
    TokenLoader loader(dir.path(), "train", B, T, 5, r, world);
    for (int64_t step = 0; step < 300; ++step)
      for (int64_t b = 0; b < B; ++b) {
        const int64_t s = loader.window_start(step, b);
        spans[r].first = std::min(spans[r].first, s);
        spans[r].second = std::max(spans[r].second, s + T);  // last token the window reads
      }
  }
  for (int r = 0; r + 1 < world; ++r)
    EXPECT_LT(spans[r].second, spans[r + 1].first) << "ranks " << r << " and " << r + 1 << " overlap";
  EXPECT_EQ(spans[0].first, 0);
  EXPECT_EQ(spans[world - 1].second, 1999);
}

TEST(Loader, SequentialWindowsCoverTheSplitOnceInOrder) {
  testing::TempDir dir;
  write_dataset(dir.path(), {50, 77, 3}, 100000);  // 130 tokens: 8 windows of T=16
  const int64_t B = 3, T = 16;
  TokenLoader loader(dir.path(), "val", B, T, 1);
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
  std::vector<int32_t> firsts;
  for (int r = 0; r < world; ++r) {
    TokenLoader loader(dir.path(), "val", B, T, 1, r, world);
    std::vector<int32_t> in(B * T), tg(B * T);
    while (int64_t n = loader.next(in.data(), tg.data()))
      for (int64_t b = 0; b < n; ++b) firsts.push_back(in[b * T]);
  }
  ASSERT_EQ(firsts.size(), 50u);
  for (size_t k = 0; k < firsts.size(); ++k) EXPECT_EQ(firsts[k], static_cast<int32_t>(k * T));
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
  TokenLoader seq(dir.path(), "val", 2, 9, 1);  // 11 windows
  const std::string msg = error_of([&] { seq.restore(LoaderState{0, 12}); });
  EXPECT_NE(msg.find("restored position 12 is beyond the 11 windows"), std::string::npos) << msg;
}

TEST(Loader, BadDatasetsAreClearErrors) {
  testing::TempDir dir;
  std::string msg = error_of([&] { TokenLoader l(dir / "missing", "train", 1, 8, 1); });
  EXPECT_NE(msg.find("missing: dataset directory does not exist"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir.path(), "train", 1, 8, 1); });
  EXPECT_NE(msg.find("no metadata.json"), std::string::npos) << msg;

  write_dataset(dir / "d", {30, 10}, 1000);
  msg = error_of([&] { TokenLoader l(dir / "d", "test", 1, 8, 1); });
  EXPECT_NE(msg.find("no split 'test'"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir / "d", "train", 1, 40, 1); });
  EXPECT_NE(msg.find("split 'train' (train_0000.bin, train_0001.bin) holds 40 tokens, fewer than the T+1 = 41"),
            std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir / "d", "train", 1, 15, 1, 2, 3); });
  EXPECT_NE(msg.find("rank 2 of 3 gets 14 tokens, fewer than the T+1 = 16"), std::string::npos) << msg;
  msg = error_of([&] { TokenLoader l(dir / "d", "train", 1, 8, 1, 3, 3); });
  EXPECT_NE(msg.find("rank 3 is outside [0, world_size 3)"), std::string::npos) << msg;

  // Truncated shard, and a shard with an id outside the vocabulary: named with the position.
  std::filesystem::resize_file(dir / "d" / "train_0001.bin", 64 + 7);
  msg = error_of([&] { TokenLoader l(dir / "d", "train", 1, 8, 1); });
  EXPECT_NE(msg.find("train_0001.bin: truncated or oversized shard"), std::string::npos) << msg;
  std::string bytes = read_file(dir / "d" / "val_0000.bin");
  const uint16_t bad = 1000;
  std::memcpy(bytes.data() + 64 + 2 * 17, &bad, 2);
  write_file_atomic(dir / "d" / "val_0000.bin", bytes);
  msg = error_of([&] { TokenLoader l(dir / "d", "val", 1, 8, 1); });
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
  TokenLoader train(o.out, "train", 4, 64, 1), val(o.out, "val", 4, 64, 1);
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
