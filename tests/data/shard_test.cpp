// Token shards: round trips in both widths, and truncated or corrupt shards rejected with
// errors naming the file and position.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "data/shard.h"
#include "data_fixtures.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using difftx::testing::error_of;

std::filesystem::path write_shard(const testing::TempDir& dir, const std::string& name,
                                  const std::vector<int32_t>& ids, int64_t vocab) {
  ShardWriter w(dir / name, vocab);
  w.append(ids.data(), ids.size());
  w.commit();
  return dir / name;
}

TEST(Shard, RoundTripsAndPicksTheNarrowestWidth) {
  testing::TempDir dir;
  Rng rng(3);
  for (int64_t vocab : {257, 65536, 65537, 200019}) {
    std::vector<int32_t> ids(1000);
    for (auto& id : ids) id = static_cast<int32_t>(rng.below(vocab));
    ids[0] = static_cast<int32_t>(vocab - 1);
    const auto path = write_shard(dir, std::to_string(vocab) + ".bin", ids, vocab);
    const Shard s(path);
    EXPECT_EQ(s.token_bytes(), vocab <= 65536 ? 2 : 4);
    EXPECT_EQ(s.vocab_size(), vocab);
    ASSERT_EQ(s.tokens(), 1000);
    EXPECT_EQ(std::filesystem::file_size(path), 64 + 1000 * s.token_bytes());
    std::vector<int32_t> back(1000);
    s.copy(0, 1000, back.data());
    EXPECT_EQ(back, ids);
    EXPECT_EQ(s[999], ids[999]);
  }
}

TEST(Shard, TruncatedShardIsAnError) {
  testing::TempDir dir;
  const auto path = write_shard(dir, "t.bin", std::vector<int32_t>(100, 7), 1000);
  std::filesystem::resize_file(path, 64 + 2 * 100 - 1);
  std::string msg = error_of([&] { Shard s(path); });
  EXPECT_NE(msg.find(path.string() + ": truncated or oversized shard: the header says 100 tokens (200 bytes after the header) but the file holds 199"),
            std::string::npos) << msg;
  std::filesystem::resize_file(path, 30);
  msg = error_of([&] { Shard s(path); });
  EXPECT_NE(msg.find("truncated shard: 30 bytes, shorter than the 64-byte header"), std::string::npos) << msg;
}

TEST(Shard, OutOfRangeIdsAreErrorsNamingThePosition) {
  testing::TempDir dir;
  std::vector<int32_t> ids(10000, 5);
  const auto path = write_shard(dir, "o.bin", ids, 1000);
  // Corrupt token 7777 on disk: 1000 is not below the vocabulary size 1000.
  std::string bytes = io::read_whole_file(path);
  const uint16_t bad = 1000;
  std::memcpy(bytes.data() + 64 + 2 * 7777, &bad, 2);
  io::write_file_atomically(path, bytes);
  const std::string msg = error_of([&] { Shard s(path); });
  EXPECT_NE(msg.find(path.string() + ": token id 1000 at position 7777 is not below the vocabulary size 1000"),
            std::string::npos) << msg;
  // The writer refuses them in the first place.
  ShardWriter w(dir / "w.bin", 1000);
  const int32_t too_big[] = {1, 2, 1000};
  const std::string wmsg = error_of([&] { w.append(too_big, 3); });
  EXPECT_NE(wmsg.find("token id 1000 at position 2 is outside [0, 1000)"), std::string::npos) << wmsg;
}

TEST(Shard, CorruptHeadersAreErrors) {
  testing::TempDir dir;
  const auto path = write_shard(dir, "h.bin", std::vector<int32_t>(10, 1), 100);
  const std::string good = io::read_whole_file(path);
  const std::pair<size_t, std::string> cases[] = {
      {0, "not a token shard"}, {8, "shard format version"}, {12, "bytes per token is"},
      {40, "reserved header byte 40 is not zero"}};
  for (const auto& [offset, expected] : cases) {
    std::string bytes = good;
    bytes[offset] ^= 0x5A;
    io::write_file_atomically(path, bytes);
    const std::string msg = error_of([&] { Shard s(path); });
    EXPECT_NE(msg.find(expected), std::string::npos) << "byte " << offset << ": " << msg;
  }
  const std::string missing = error_of([&] { Shard s(dir / "none.bin"); });
  EXPECT_NE(missing.find("none.bin: cannot open"), std::string::npos) << missing;
}

TEST(Shard, UncommittedWriterLeavesNoFile) {
  testing::TempDir dir;
  {
    ShardWriter w(dir / "x.bin", 100);
    const int32_t ids[] = {1, 2, 3};
    w.append(ids, 3);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "x.bin"));
  EXPECT_FALSE(std::filesystem::exists(dir / "x.bin.tmp"));
}

}  // namespace
}  // namespace difftx::data
