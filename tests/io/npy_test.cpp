#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/npy.h"
#include "support/testing.h"

namespace difftx::io {
namespace {

using testing::error_message;
using testing::expect_contains;
using testing::fixture_path;
using testing::TempDir;
using testing::write_bytes;
using Shape = std::vector<int64_t>;

// An npy 1.0 file image with the given header dict text (padded with a newline) and data.
std::string npy_bytes(const std::string& dict, std::string_view data) {
  const std::string header = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data);
}

TEST(Npy, WriteThenReadRoundTripsEveryRank) {
  TempDir dir;
  Rng rng(3);
  for (const Shape& shape : {Shape{2, 3}, Shape{5}, Shape{}, Shape{0, 3}, Shape{2, 1, 3}, Shape{1000}}) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> data = testing::random_vector(n, rng, -10, 10);
    if (n > 2) data[1] = std::numeric_limits<float>::quiet_NaN(), data[2] = -0.0f;
    write_npy(dir / "a.npy", shape, data);
    const auto back = read_npy_f32(dir / "a.npy");
    EXPECT_EQ(back.shape, shape);
    ASSERT_EQ(back.data.size(), data.size());
    EXPECT_TRUE(data.empty() || std::memcmp(back.data.data(), data.data(), data.size() * 4) == 0);
  }
}

// The bytes numpy's format 1.0 prescribes: magic, version, uint16 header length, a dict with
// the shape as a Python tuple, spaces and a newline up to a multiple of 64 bytes.
TEST(Npy, WriterProducesTheVersion1HeaderNumpyExpects) {
  TempDir dir;
  const std::vector<float> six(6, 1.0f), one(1, 2.0f), five(5, 0.0f);
  const struct {
    Shape shape;
    const std::vector<float>* data;
    std::string tuple;
  } cases[] = {{{2, 3}, &six, "(2, 3)"}, {{5}, &five, "(5,)"}, {{}, &one, "()"}};
  for (const auto& c : cases) {
    write_npy(dir / "h.npy", c.shape, *c.data);
    const std::string bytes = read_whole_file(dir / "h.npy");
    ASSERT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u);
    const std::string header = bytes.substr(10, header_len);
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + c.tuple + ", }";
    EXPECT_EQ(header.substr(0, dict.size()), dict);
    EXPECT_EQ(header.find_first_not_of(' ', dict.size()), header_len - 1);
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(bytes.size(), 10 + header_len + c.data->size() * 4);
  }
}

// tests/fixtures/npy/make_fixture.py writes these with numpy's own np.save.
TEST(Npy, ReadsFilesWrittenByNumpy) {
  const auto f = read_npy_f32(fixture_path("npy/f4_2x3.npy"));
  EXPECT_EQ(f.shape, (Shape{2, 3}));
  EXPECT_EQ(f.data, (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  const auto scalar = read_npy_f32(fixture_path("npy/f4_scalar.npy"));
  EXPECT_EQ(scalar.shape, Shape{});
  EXPECT_EQ(scalar.data, std::vector<float>{-7.25f});
  const auto empty = read_npy_f32(fixture_path("npy/f4_empty.npy"));
  EXPECT_EQ(empty.shape, (Shape{0, 3}));
  EXPECT_TRUE(empty.data.empty());
  const auto i4 = read_npy_i64(fixture_path("npy/i4_4.npy"));
  EXPECT_EQ(i4.shape, Shape{4});
  EXPECT_EQ(i4.data, (std::vector<int64_t>{-2, 0, 7, 2147483647}));
  const auto i8 = read_npy_i64(fixture_path("npy/i8_2x2.npy"));
  EXPECT_EQ(i8.shape, (Shape{2, 2}));
  EXPECT_EQ(i8.data, (std::vector<int64_t>{-(int64_t{1} << 40), 1, 2, int64_t{1} << 40}));
}

TEST(Npy, RefusesDtypesAndLayoutsItDoesNotRead) {
  expect_contains(error_message([] { read_npy_f32(fixture_path("npy/f8_2.npy")); }),
                  "f8_2.npy: npy dtype '<f8' is not supported here (accepted: '<f4')");
  expect_contains(error_message([] { read_npy_f32(fixture_path("npy/f4_fortran.npy")); }),
                  "f4_fortran.npy: npy array is in Fortran order");
  expect_contains(error_message([] { read_npy_i64(fixture_path("npy/f4_2x3.npy")); }),
                  "npy dtype '<f4' is not supported here (accepted: '<i4', '<i8')");
  expect_contains(error_message([] { read_npy_f32(fixture_path("npy/i8_2x2.npy")); }), "'<i8' is not supported");
}

TEST(Npy, WriterRejectsDataThatDoesNotMatchTheShape) {
  TempDir dir;
  const std::vector<float> five(5);
  expect_contains(error_message([&] { write_npy(dir / "x.npy", {2, 3}, five); }),
                  "cannot write '" + (dir / "x.npy").string() + "': shape [2, 3] does not match 5 elements");
  expect_contains(error_message([&] { write_npy(dir / "x.npy", {-5}, five); }), "shape [-5]");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Npy, EveryTruncationOfANumpyFileIsRejected) {
  TempDir dir;
  const std::string real = read_whole_file(fixture_path("npy/f4_2x3.npy"));
  for (size_t length = 0; length < real.size(); ++length) {
    write_bytes(dir / "t.npy", std::string_view(real).substr(0, length));
    EXPECT_NE(error_message([&] { read_npy_f32(dir / "t.npy"); }), "") << "length " << length;
  }
}

TEST(Npy, HostileHeadersAreRejectedWithTheirReason) {
  TempDir dir;
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight(8, '\0');
  const struct {
    std::string bytes;
    std::string reason;
  } cases[] = {
      {"", "not an npy file"},
      {"\x93NUMPZ\x01\x00\x00\x00", "not an npy file"},
      {std::string("\x93NUMPY\x04\x00\x00\x00", 10), "npy version 4.0 is not supported"},
      {std::string("\x93NUMPY\x02\x00\x00\x00", 10), "ends inside its header length"},
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10) + good, "header length 65535 runs past the end"},
      {npy_bytes(good, "") , "does not match the 0 data bytes"},
      {npy_bytes(good, eight + "x"), "does not match the 9 data bytes"},
      {npy_bytes("{'descr': '<f4', 'shape': (2,), }", eight), "lacks one of"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", eight), "unexpected key 'extra'"},
      {npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", eight), "repeats key 'descr'"},
      {npy_bytes("{'descr': <f4, 'fortran_order': False, 'shape': (2,)}", eight), "expected a quoted string"},
      {npy_bytes("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", eight), "expected ',' or '}' at character 17"},
      {npy_bytes("{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}", eight), "escapes in strings"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", eight), "expected True or False"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", eight), "expected a non-negative integer"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", eight), "overflows int64"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", eight), "does not match"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", eight), "expected '('"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", eight), "text after its closing '}'"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", eight), "expected ',' or '}' at character 55"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", eight), "expected ',' or ')'"},
      {npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", eight), "npy dtype '>f4' is not supported"},
  };
  for (const auto& c : cases) {
    write_bytes(dir / "h.npy", c.bytes);
    const std::string message = error_message([&] { read_npy_f32(dir / "h.npy"); });
    EXPECT_NE(message.find(c.reason), std::string::npos) << "message: " << message << "\nexpected: " << c.reason;
    EXPECT_EQ(message.rfind((dir / "h.npy").string(), 0), 0u) << message;
  }
}

}  // namespace
}  // namespace difftx::io
