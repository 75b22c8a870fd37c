// The GGUF writer against bytes worked out by hand from the format (src/io/gguf.h), and its
// refusals.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "io/gguf.h"
#include "io/input_file.h"
#include "io/io_test_files.h"

namespace difftx {
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
  w.add_tensor("t", {2}, GgmlType::f32, {bytes, 8});
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

TEST(Gguf, RowBytesFollowTheBlockLayouts) {
  EXPECT_EQ(ggml_row_bytes(GgmlType::f32, 5), 20u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::bf16, 5), 10u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::q8_0, 4096), 128u * 34);
  EXPECT_EQ(ggml_row_bytes(GgmlType::q4_0, 64), 2u * 18);
  EXPECT_EQ(ggml_row_bytes(GgmlType::q4_k, 4096), 16u * 144);
  EXPECT_THROW(ggml_row_bytes(GgmlType::q8_0, 48), Error);
  EXPECT_THROW(ggml_row_bytes(GgmlType::f16, 0), Error);
}

TEST(Gguf, RefusesInconsistentTensors) {
  const std::vector<uint8_t> data(64);
  GgufWriter w;
  EXPECT_THROW(w.add_tensor("m", {2, 8}, GgmlType::f32, {data.data(), 60}), Error);   // 2 x 32 bytes wanted
  EXPECT_THROW(w.add_tensor(std::string(65, 'n'), {16}, GgmlType::f32, data), Error);  // name too long
  EXPECT_THROW(w.add_tensor("z", {0, 16}, GgmlType::f32, data), Error);
  w.add_tensor("m", {2, 8}, GgmlType::f32, data);
  EXPECT_THROW(w.add_tensor("m", {2, 8}, GgmlType::f32, data), Error);
  w.add("k", 1.0f);
  EXPECT_THROW(w.add("k", 2.0f), Error);
}

}  // namespace
}  // namespace difftx
