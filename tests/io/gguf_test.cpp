// The GGUF writer against bytes worked out by hand from the format (src/io/gguf.h), and its
// refusals.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "io/gguf.h"
#include "io/input_file.h"
#include "io/io_test_files.h"

namespace difftx::io {
namespace {

std::string le(uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

TEST(Gguf, WritesTheBytesTheFormatPrescribes) {
  const float values[2] = {1.5f, -2.0f};
  const auto* bytes = reinterpret_cast<const uint8_t*>(values);
  GgufWriter w;
  w.add("a", uint32_t{7});
  w.add("names", std::vector<std::string>{"x", "yz"});
  w.add_tensor("t", {2}, 0, {bytes, 8});  // ggml type 0: F32
  testing::TempDir dir;
  w.write(dir / "m.gguf");

  std::string want = "GGUF" + le(3, 4) + le(1, 8) + le(2, 8);
  want += le(1, 8) + "a" + le(4, 4) + le(7, 4);                                               // u32
  want += le(5, 8) + "names" + le(9, 4) + le(8, 4) + le(2, 8) + le(1, 8) + "x" + le(2, 8) + "yz";  // [string]
  want += le(1, 8) + "t" + le(1, 4) + le(2, 8) + le(0, 4) + le(0, 8);  // 1 dim of 2, F32, offset 0
  want.append((32 - want.size() % 32) % 32, '\0');
  want += std::string(reinterpret_cast<const char*>(bytes), 8) + std::string(24, '\0');
  EXPECT_EQ(read_whole_file(dir / "m.gguf"), want);
}

TEST(Gguf, RefusesBadTensorsAndRepeatedNames) {
  const std::vector<uint8_t> data(64);
  GgufWriter w;
  EXPECT_THROW(w.add_tensor("m", {2, 8}, 0, {}), Error);                 // no data
  EXPECT_THROW(w.add_tensor(std::string(65, 'n'), {16}, 0, data), Error);  // name too long
  EXPECT_THROW(w.add_tensor("z", {0, 16}, 0, data), Error);
  EXPECT_THROW(w.add_tensor("z", {1, 1, 1, 1, 16}, 0, data), Error);
  w.add_tensor("m", {2, 8}, 0, data);
  EXPECT_THROW(w.add_tensor("m", {2, 8}, 0, data), Error);
  w.add("k", 1.0f);
  EXPECT_THROW(w.add("k", 2.0f), Error);
}

}  // namespace
}  // namespace difftx::io
