#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/rng.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "support/testing.h"

namespace difftx::io {
namespace {

using testing::error_message;
using testing::expect_contains;
using testing::fixture_path;
using testing::safetensors_bytes;
using testing::TempDir;
using testing::write_bytes;
using Shape = std::vector<int64_t>;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(Safetensors, WriteThenReadRoundTripsF32AndI32BitForBit) {
  TempDir dir;
  Rng rng(11);
  std::vector<float> weight = testing::random_vector(30, rng, -3, 3);
  weight[0] = -0.0f;
  weight[1] = std::numeric_limits<float>::infinity();
  weight[2] = std::numeric_limits<float>::quiet_NaN();
  weight[3] = 1e-42f;  // subnormal
  weight[4] = FLT_MAX;
  const std::vector<int32_t> ids = {std::numeric_limits<int32_t>::min(), -1, 0, 7, std::numeric_limits<int32_t>::max()};
  const std::vector<float> scalar = {3.5f};
  const std::vector<float> empty;
  const std::vector<SafetensorsEntry> entries = {
      {"b.weight", {6, 5}, weight}, {"a.ids", {5}, ids}, {"c.scalar", {}, scalar}, {"d.empty", {0, 7}, empty}};
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"step", "12"}};
  write_safetensors(dir / "m.safetensors", entries, metadata);

  SafetensorsReader reader(dir / "m.safetensors");
  EXPECT_EQ(reader.names(), (std::vector<std::string>{"a.ids", "b.weight", "c.scalar", "d.empty"}));
  EXPECT_EQ(reader.metadata(), metadata);
  EXPECT_EQ(reader.info("b.weight").dtype, "F32");
  EXPECT_EQ(reader.info("b.weight").shape, (Shape{6, 5}));
  EXPECT_EQ(reader.info("a.ids").dtype, "I32");
  EXPECT_TRUE(same_bits(reader.read_f32("b.weight", Shape{6, 5}), weight));
  EXPECT_EQ(reader.read_i32("a.ids", Shape{5}), ids);
  EXPECT_EQ(reader.read_f32("c.scalar", Shape{}), scalar);
  EXPECT_TRUE(reader.read_f32("d.empty", Shape{0, 7}).empty());
  std::vector<float> into(30);
  reader.read_f32("b.weight", into);
  EXPECT_TRUE(same_bits(into, weight));
}

TEST(Safetensors, WriterSortsNamesPacksDataInThatOrderAndAlignsTheDataSection) {
  TempDir dir;
  const std::vector<float> z = {1, 2, 3}, a = {4}, m = {5, 6};
  const std::vector<SafetensorsEntry> entries = {{"z", {3}, z}, {"a", {1}, a}, {"m", {2}, m}};
  write_safetensors(dir / "x.safetensors", entries);

  const std::string bytes = read_whole_file(dir / "x.safetensors");
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_EQ((8 + header_len) % 8, 0u);
  const std::string header = bytes.substr(8, header_len);
  EXPECT_LT(header.size() - (header.find_last_not_of(' ') + 1), 8u) << "padding is fewer than 8 spaces";
  const auto json = nlohmann::json::parse(header);
  EXPECT_FALSE(json.contains("__metadata__")) << "no metadata given, none written";
  EXPECT_EQ(json["a"]["data_offsets"], nlohmann::json({0, 4}));
  EXPECT_EQ(json["m"]["data_offsets"], nlohmann::json({4, 12}));
  EXPECT_EQ(json["z"]["data_offsets"], nlohmann::json({12, 24}));
  EXPECT_EQ(json["z"]["dtype"], "F32");
  EXPECT_EQ(json["z"]["shape"], nlohmann::json({3}));
  ASSERT_EQ(bytes.size(), 8 + header_len + 24);
  const std::vector<float> data_in_file_order = {4, 5, 6, 1, 2, 3};
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + header_len, data_in_file_order.data(), 24), 0);
}

// tests/fixtures/safetensors/make_fixture.py writes this file by hand from Python, with torch
// doing the F16/BF16 rounding: the expected float32 bits come from an independent source.
TEST(Safetensors, ReadsAFileWrittenByAnotherToolWithF32F16BF16F64AndI64) {
  const SafetensorsReader reader(fixture_path("safetensors/tiny.safetensors"));
  const auto expected = read_json_file(fixture_path("safetensors/tiny_expected.json"));
  // The fixture must keep exercising an unaligned data section and all five dtypes.
  const std::string bytes = read_whole_file(fixture_path("safetensors/tiny.safetensors"));
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_NE((8 + header_len) % 4, 0u);

  EXPECT_EQ(reader.metadata(), (expected["metadata"].get<std::map<std::string, std::string>>()));
  std::vector<std::string> want_names;
  std::set<std::string> dtypes;
  for (const auto& [name, want] : expected["tensors"].items()) {
    want_names.push_back(name);
    SCOPED_TRACE(name);
    const auto& info = reader.info(name);
    const Shape shape = want["shape"].get<Shape>();
    EXPECT_EQ(info.dtype, want["dtype"].get<std::string>());
    EXPECT_EQ(info.shape, shape);
    dtypes.insert(info.dtype);
    if (info.dtype == "I64") {
      const auto values = want["values"].get<std::vector<int64_t>>();
      const auto got = reader.read_i32(name, shape);
      EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), values);
    } else {
      const auto bits = want["f32_bits"].get<std::vector<uint32_t>>();
      const auto got = reader.read_f32(name, shape);
      ASSERT_EQ(got.size(), bits.size());
      for (size_t i = 0; i < bits.size(); ++i)
        EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), bits[i]) << "element " << i << " = " << got[i];
    }
  }
  std::sort(want_names.begin(), want_names.end());
  EXPECT_EQ(reader.names(), want_names);
  EXPECT_EQ(dtypes, (std::set<std::string>{"F16", "BF16", "F32", "F64", "I64"}));
}

TEST(Safetensors, WidensF64ToFloatWithOverflowToInfinityAndRangeChecksI64) {
  TempDir dir;
  // 0x1.fffffe8p+127 lies below FLT_MAX + half an ulp and rounds down to FLT_MAX;
  // 0x1.ffffffp+127 is the tie, which rounds to even: infinity.
  const double doubles[] = {0.1, -1e300, 1e300, 0x1.fffffe8p+127, 0x1.ffffffp+127, -0.0};
  const int64_t big[] = {1, int64_t{1} << 40};
  std::string data(reinterpret_cast<const char*>(doubles), sizeof doubles);
  data.append(reinterpret_cast<const char*>(big), sizeof big);
  write_bytes(dir / "f.safetensors",
              safetensors_bytes(R"({"d":{"dtype":"F64","shape":[6],"data_offsets":[0,48]},)"
                                R"("big":{"dtype":"I64","shape":[2],"data_offsets":[48,64]}})",
                                data));
  const SafetensorsReader reader(dir / "f.safetensors");
  const auto d = reader.read_f32("d");
  EXPECT_EQ(d[0], 0.1f);
  EXPECT_EQ(d[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(d[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(d[3], FLT_MAX);
  EXPECT_EQ(d[4], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(d[5]) && d[5] == 0.0f);
  const std::string message = error_message([&] { reader.read_i32("big"); });
  expect_contains(message, "f.safetensors: tensor 'big' element 1 is 1099511627776, outside the int32 range");
}

TEST(Safetensors, ErrorsNameTheFileTheTensorAndWhatWasExpected) {
  TempDir dir;
  const std::vector<float> w(6, 1.0f);
  const std::vector<int32_t> ids(4, 2);
  const std::vector<SafetensorsEntry> entries = {{"w", {2, 3}, w}, {"ids", {4}, ids}};
  write_safetensors(dir / "model.safetensors", entries);
  const SafetensorsReader reader(dir / "model.safetensors");
  const std::string file = (dir / "model.safetensors").string();

  expect_contains(error_message([&] { reader.read_f32("missing"); }), file + ": no tensor named 'missing'");
  expect_contains(error_message([&] { reader.info("missing"); }), "no tensor named 'missing'");
  expect_contains(error_message([&] { reader.read_f32("w", Shape{3, 2}); }),
                  file + ": tensor 'w' has shape [2, 3], expected [3, 2]");
  expect_contains(error_message([&] { reader.read_i32("ids", Shape{}); }), "tensor 'ids' has shape [4], expected []");
  expect_contains(error_message([&] { reader.read_f32("ids"); }), "tensor 'ids' has dtype I32, expected a float dtype");
  expect_contains(error_message([&] { reader.read_i32("w"); }), "tensor 'w' has dtype F32, expected an integer dtype");
  std::vector<float> small(5);
  expect_contains(error_message([&] { reader.read_f32("w", small); }),
                  "tensor 'w' has 6 elements, but the destination holds 5");
  expect_contains(error_message([] { SafetensorsReader("/nonexistent/model.safetensors"); }),
                  "/nonexistent/model.safetensors: cannot open");
  expect_contains(error_message([&] { SafetensorsReader{dir.path()}; }), "not a regular file");
}

TEST(Safetensors, WriterRejectsBadTensorsBeforeTouchingTheDisk) {
  TempDir dir;
  const std::vector<float> four(4, 1.0f);
  const struct {
    std::vector<SafetensorsEntry> entries;
    std::map<std::string, std::string> metadata;
    std::string reason;
  } cases[] = {
      {{{"a", {4}, four}, {"a", {2, 2}, four}}, {}, "tensor 'a' appears twice"},
      {{{"", {4}, four}}, {}, "'' is not a usable tensor name"},
      {{{"__metadata__", {4}, four}}, {}, "'__metadata__' is not a usable tensor name"},
      {{{"a", {-4}, four}}, {}, "tensor 'a' has shape [-4] but 4 elements of data"},
      {{{"a", {5}, four}}, {}, "tensor 'a' has shape [5] but 4 elements of data"},
      {{{"a\xff", {4}, four}}, {}, "invalid UTF-8"},
      {{{"a", {4}, four}}, {{"note", "\xc3"}}, "UTF-8"},
  };
  for (const auto& c : cases) {
    const std::string message = error_message([&] { write_safetensors(dir / "bad.safetensors", c.entries, c.metadata); });
    expect_contains(message, "cannot write '" + (dir / "bad.safetensors").string() + "'");
    expect_contains(message, c.reason);
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "nothing written for: " << c.reason;
  }
}

// Layouts that follow the format but that difftx's writer never produces.
TEST(Safetensors, AcceptsEveryConformingLayout) {
  TempDir dir;
  const auto open = [&](std::string_view header, std::string_view data) {
    write_bytes(dir / "ok.safetensors", safetensors_bytes(header, data));
    return SafetensorsReader(dir / "ok.safetensors");
  };
  EXPECT_TRUE(open("{}", "").names().empty());
  EXPECT_TRUE(open(R"({"__metadata__":{}}     )", "").metadata().empty());

  // Tensors stored out of name order, an unknown extra key, padding, a U8 tensor, a packed
  // F4 tensor and two empty tensors at the same offset.
  const float f[2] = {1.5f, -2.0f};
  std::string data(reinterpret_cast<const char*>(f), sizeof f);
  data += "\x01\x02\x03";  // U8 [3]
  data += "\x21\x43";      // F4 [4]
  const auto reader = open(R"({"u":{"dtype":"U8","shape":[3],"data_offsets":[8,11]},)"
                           R"( "a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"note":"extra keys are ignored"},)"
                           R"( "f4":{"dtype":"F4","shape":[4],"data_offsets":[11,13]},)"
                           R"( "e1":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
                           R"( "e2":{"dtype":"I64","shape":[3,0],"data_offsets":[8,8]}}   )",
                           data);
  EXPECT_EQ(reader.names(), (std::vector<std::string>{"a", "e1", "e2", "f4", "u"}));
  EXPECT_EQ(reader.read_f32("a"), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_TRUE(reader.read_f32("e1").empty());
  EXPECT_TRUE(reader.read_i32("e2").empty());
  EXPECT_EQ(reader.info("u").dtype, "U8");
  EXPECT_EQ(reader.info("f4").elements, 4u);
  expect_contains(error_message([&] { reader.read_f32("u"); }), "tensor 'u' has dtype U8");
}

}  // namespace
}  // namespace difftx::io
