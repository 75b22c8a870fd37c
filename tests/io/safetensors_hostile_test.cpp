// Hostile safetensors files: every one must give a difftx::Error (or, when the corruption
// happens to leave a valid file, a read that stays in bounds), never a crash. Run these under
// ASan/UBSan too (docs/FORMATS.md says how).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/safetensors.h"

namespace difftx::io {
namespace {

using testing::fixture_path;
using testing::safetensors_bytes;
using testing::TempDir;
using testing::write_bytes;

uint64_t header_length(std::string_view bytes) {
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return n;
}

// Writes `bytes` as a file, opens it and reads every tensor as a model loader would. Returns
// the Error message, or "" when everything was read. A successful open must describe tensors
// that tile the data section exactly (what the reader promises); any exception other than
// difftx::Error fails the test.
std::string open_and_read_all(const std::filesystem::path& path, std::string_view bytes) {
  write_bytes(path, bytes);
  try {
    const SafetensorsReader reader(path);
    const uint64_t data_size = bytes.size() - 8 - header_length(bytes);
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const auto& name : reader.names()) {
      const auto& info = reader.info(name);
      ranges.emplace_back(info.data_begin, info.data_end);
      if (info.dtype == "F32" || info.dtype == "F16" || info.dtype == "BF16" || info.dtype == "F64") {
        EXPECT_EQ(reader.read_f32(name, info.shape).size(), info.elements);
      } else if (info.dtype == "I32" || info.dtype == "I64") {
        EXPECT_EQ(reader.read_i32(name, info.shape).size(), info.elements);
      }
    }
    std::sort(ranges.begin(), ranges.end());
    uint64_t covered = 0;
    for (const auto& [begin, end] : ranges) {
      EXPECT_EQ(begin, covered);
      covered = end;
    }
    EXPECT_EQ(covered, data_size);
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a difftx::Error: " << e.what();
    return "unexpected exception";
  }
}

class SafetensorsHostile : public ::testing::Test {
 protected:
  std::string real_file = read_whole_file(fixture_path("safetensors/tiny.safetensors"));
  TempDir dir;
  std::filesystem::path path = dir / "hostile.safetensors";
};

TEST_F(SafetensorsHostile, TheUncorruptedFileReads) { EXPECT_EQ(open_and_read_all(path, real_file), ""); }

TEST_F(SafetensorsHostile, EveryTruncationIsRejectedForTheRightReason) {
  const uint64_t header_end = 8 + header_length(real_file);
  for (size_t length = 0; length < real_file.size(); ++length) {
    const std::string message = open_and_read_all(path, std::string_view(real_file).substr(0, length));
    SCOPED_TRACE("truncated to " + std::to_string(length) + " bytes: " + message);
    if (length < 8)
      EXPECT_NE(message.find("shorter than the 8-byte"), std::string::npos);
    else if (length < header_end)
      EXPECT_NE(message.find("runs past the end of the file"), std::string::npos);
    else
      EXPECT_TRUE(message.find("run past the end of the data section") != std::string::npos ||
                  message.find("cover only") != std::string::npos);
  }
  // One byte too many is as wrong as one too few.
  EXPECT_NE(open_and_read_all(path, real_file + '\0').find("cover only"), std::string::npos);
}

TEST_F(SafetensorsHostile, AbsurdHeaderLengthsAreRejectedBeforeAllocating) {
  const auto with_length = [&](uint64_t n) {
    std::string bytes = real_file;
    std::memcpy(bytes.data(), &n, 8);
    return open_and_read_all(path, bytes);
  };
  for (uint64_t n : {~uint64_t{0}, uint64_t{1} << 63, kSafetensorsMaxHeaderBytes + 1})
    EXPECT_NE(with_length(n).find("exceeds the format's limit"), std::string::npos) << n;
  for (uint64_t n : {uint64_t{real_file.size() - 7}, kSafetensorsMaxHeaderBytes})
    EXPECT_NE(with_length(n).find("runs past the end of the file"), std::string::npos) << n;
  EXPECT_NE(with_length(0).find("invalid JSON"), std::string::npos);
}

// One hand-made header per validation rule, each with the reason the error must give.
TEST_F(SafetensorsHostile, HeadersBreakingEachRuleAreRejectedWithTheirReason) {
  const std::string eight(8, '\0');
  const auto entry = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return R"({"dtype":)" + dtype + R"(,"shape":)" + shape + R"(,"data_offsets":)" + offsets + "}";
  };
  const std::string ok = entry(R"("F32")", "[2]", "[0,8]");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const struct {
    std::string header;
    std::string data;
    std::string reason;
  } cases[] = {
      // not JSON, or not an object
      {"", "", "invalid JSON"},
      {"{", "", "invalid JSON"},
      {R"({"a":)" + ok + ",}", eight, "invalid JSON"},
      {R"({"a":)" + ok + "} x", eight, "invalid JSON"},
      {R"({"a":)" + ok + std::string("}\0", 2), eight, "header has a NUL byte at offset " + std::to_string(6 + ok.size())},
      {R"({"a":)" + ok + std::string("}\0{\"hidden\":1}", 14), eight, "header has a NUL byte"},
      {"{\"a\xff\":" + ok + "}", eight, "invalid JSON"},
      {"[]", "", "header is a JSON array, expected a JSON object"},
      {"1", "", "header is 1, expected a JSON object"},
      {R"("x")", "", "expected a JSON object"},
      {"null", "", "expected a JSON object"},
      {R"({"a":)" + ok + R"(,"a":)" + ok + "}", eight, "header names 'a' twice"},
      {R"({"a":)" + deep + "}", "", "deeper than the format allows"},
      // entries
      {R"({"a":5})", "", "tensor 'a': entry is 5, expected an object"},
      {R"({"a":[]})", "", "tensor 'a': entry is a JSON array"},
      {R"({"a":{"shape":[2],"data_offsets":[0,8]}})", eight, "tensor 'a': entry has no \"dtype\""},
      {R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", eight, "entry has no \"shape\""},
      {R"({"a":{"dtype":"F32","shape":[2]}})", eight, "entry has no \"data_offsets\""},
      // dtype
      {R"({"a":)" + entry("5", "[2]", "[0,8]") + "}", eight, "dtype is 5, expected a string"},
      {R"({"a":)" + entry(R"("F17")", "[2]", "[0,8]") + "}", eight, "unknown dtype \"F17\""},
      {R"({"a":)" + entry(R"("f32")", "[2]", "[0,8]") + "}", eight, "unknown dtype \"f32\""},
      // shape
      {R"({"a":)" + entry(R"("F32")", R"("2")", "[0,8]") + "}", eight, "shape is \"2\", expected an array"},
      {R"({"a":)" + entry(R"("F32")", "[-2]", "[0,8]") + "}", eight, "shape[0] is -2, expected a non-negative"},
      {R"({"a":)" + entry(R"("F32")", "[2.0]", "[0,8]") + "}", eight, "shape[0] is 2.0"},
      {R"({"a":)" + entry(R"("F32")", "[1,\"2\"]", "[0,8]") + "}", eight, "shape[1] is \"2\""},
      {R"({"a":)" + entry(R"("F32")", "[[2]]", "[0,8]") + "}", eight, "deeper than the format allows"},
      {R"({"a":)" + entry(R"("F32")", "[9223372036854775808]", "[0,8]") + "}", eight, "shape[0] is 9223372036854775808"},
      {R"({"a":)" + entry(R"("F32")", "[4294967296,4294967296]", "[0,8]") + "}", eight,
       "needs more bytes than the file's data section holds"},
      {R"({"a":)" + entry(R"("F32")", "[1]", "[0,8]") + "}", eight, "span 8 bytes, but shape [1] of F32 needs 4"},
      {R"({"a":)" + entry(R"("F32")", "[3]", "[0,8]") + "}", eight, "shape [3] of dtype F32 needs more bytes"},
      {R"({"a":)" + entry(R"("F4")", "[3]", "[0,2]") + "}", std::string(2, '\0'), "do not fill a whole number of bytes"},
      // data_offsets
      {R"({"a":)" + entry(R"("F32")", "[2]", "[0]") + "}", eight, "data_offsets is an array of 1, expected [begin, end]"},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[0,8,8]") + "}", eight, "data_offsets is an array of 3"},
      {R"({"a":)" + entry(R"("F32")", "[2]", R"("0,8")") + "}", eight, "data_offsets is \"0,8\""},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[-1,7]") + "}", eight, "are not non-negative integers"},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[0.0,8]") + "}", eight, "are not non-negative integers"},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[8,0]") + "}", eight, "data_offsets [8, 0] are reversed"},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[0,18446744073709551615]") + "}", eight,
       "run past the end of the data section (8 bytes)"},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[8,16]") + "}", eight, "run past the end of the data section"},
      // tiling of the data section
      {R"({"a":)" + ok + R"(,"b":)" + entry(R"("F32")", "[2]", "[4,12]") + "}", std::string(12, '\0'),
       "tensor 'b' data_offsets [4, 12] overlap tensor 'a'"},
      {R"({"a":)" + ok + R"(,"b":)" + ok + "}", eight, "overlap tensor 'a'"},
      {R"({"a":)" + ok + R"(,"z":)" + entry(R"("F32")", "[0]", "[4,4]") + "}", eight, "tensor 'z' data_offsets [4, 4] overlap"},
      {R"({"a":)" + ok + R"(,"b":)" + entry(R"("F32")", "[2]", "[12,20]") + "}", std::string(20, '\0'),
       "bytes [8, 12) of the data section belong to no tensor (gap before tensor 'b')"},
      {R"({"a":)" + entry(R"("F32")", "[2]", "[4,12]") + "}", std::string(12, '\0'), "bytes [0, 4)"},
      {R"({"a":)" + ok + "}", std::string(12, '\0'), "the data section has 12 bytes but the tensors cover only 8"},
      // __metadata__
      {R"({"__metadata__":5})", "", "\"__metadata__\" is 5, expected an object of strings"},
      {R"({"__metadata__":{"k":1}})", "", "\"__metadata__\" key 'k' is 1, expected a string"},
      {R"({"__metadata__":{"k":{"x":"y"}}})", "", "key 'k' is a JSON object"},
      {R"({"__metadata__":{"k":["v"]}})", "", "key 'k' is a JSON array"},
  };
  for (const auto& c : cases) {
    const std::string message = open_and_read_all(path, safetensors_bytes(c.header, c.data));
    EXPECT_NE(message.find(c.reason), std::string::npos)
        << "header: " << c.header.substr(0, 200) << "\nmessage: " << message << "\nexpected: " << c.reason;
    EXPECT_EQ(message.rfind(path.string(), 0), 0u) << "the message names the file: " << message;
  }
}

TEST_F(SafetensorsHostile, WrongShapesAreRejectedNamingBothShapes) {
  const SafetensorsReader reader(fixture_path("safetensors/tiny.safetensors"));
  const std::vector<int64_t> shape = reader.info("model.embed_tokens.weight").shape;  // [3, 4]
  for (const std::vector<int64_t>& wrong : {std::vector<int64_t>{4, 3}, {12}, {3, 4, 1}, {}, {3, 5}}) {
    const std::string message = testing::error_message([&] { reader.read_f32("model.embed_tokens.weight", wrong); });
    EXPECT_NE(message.find("has shape [3, 4], expected"), std::string::npos) << message;
  }
  EXPECT_EQ(reader.read_f32("model.embed_tokens.weight", shape).size(), 12u);
}

// Random corruption of the length field and the JSON, with a fixed seed: each variant is an
// error or a valid file read in bounds. Most variants must be errors, or the validation is
// not looking.
TEST_F(SafetensorsHostile, RandomByteFlipsInTheHeaderGiveAnErrorOrAValidRead) {
  const uint64_t header_end = 8 + header_length(real_file);
  Rng rng(20240917);
  int errors = 0, valid = 0;
  for (int variant = 0; variant < 3000; ++variant) {
    std::string bytes = real_file;
    const int flips = 1 + static_cast<int>(rng.below(4));
    for (int f = 0; f < flips; ++f) bytes[rng.below(header_end)] ^= static_cast<char>(1 + rng.below(255));
    (open_and_read_all(path, bytes).empty() ? valid : errors) += 1;
    if (::testing::Test::HasFailure()) FAIL() << "variant " << variant;
  }
  std::printf("header byte flips: %d errors, %d still valid\n", errors, valid);
  EXPECT_GT(errors, 2700);
}

// The data section carries no structure: flipped data bytes keep the file valid, and every
// read stays in bounds. Only the int32 range check may object.
TEST_F(SafetensorsHostile, RandomByteFlipsInTheDataKeepTheFileReadable) {
  const uint64_t header_end = 8 + header_length(real_file);
  Rng rng(7);
  for (int variant = 0; variant < 500; ++variant) {
    std::string bytes = real_file;
    for (int f = 0; f < 3; ++f)
      bytes[header_end + rng.below(bytes.size() - header_end)] ^= static_cast<char>(1 + rng.below(255));
    const std::string message = open_and_read_all(path, bytes);
    EXPECT_TRUE(message.empty() || message.find("outside the int32 range") != std::string::npos) << message;
  }
}

}  // namespace
}  // namespace difftx::io
