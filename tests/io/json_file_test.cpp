#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/json_file.h"

namespace difftx::io {
namespace {

using testing::error_message;
using testing::expect_contains;
using testing::TempDir;
using testing::write_bytes;

TEST(JsonFile, WritesPrettyPrintedAndReadsBack) {
  TempDir dir;
  const nlohmann::json value = {{"hidden_size", 256}, {"attention", "diff"}, {"rope_theta", 10000.0},
                                {"layers", {1, 2, 3}}, {"name", "caf\xc3\xa9"}};
  write_json_file(dir / "config.json", value);
  const std::string text = read_whole_file(dir / "config.json");
  EXPECT_EQ(text, value.dump(2) + "\n");
  expect_contains(text, "{\n  \"attention\": \"diff\",\n");
  EXPECT_EQ(read_json_file(dir / "config.json"), value);
  write_json_file(dir / "config.json", nlohmann::json::object());  // replaces it
  EXPECT_EQ(read_json_file(dir / "config.json"), nlohmann::json::object());
}

TEST(JsonFile, ParseErrorsNameTheFileAndThePosition) {
  TempDir dir;
  write_bytes(dir / "bad.json", "{\n  \"a\": 1,\n  \"b\": tru,\n  \"c\": 2\n}\n");
  const std::string message = error_message([&] { read_json_file(dir / "bad.json"); });
  expect_contains(message, (dir / "bad.json").string() + ": invalid JSON: parse error at line 3, column");
  EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;

  write_bytes(dir / "nul.json", std::string("{}\0{\"x\":1}", 10));
  expect_contains(error_message([&] { read_json_file(dir / "nul.json"); }),
                  (dir / "nul.json").string() + " has a NUL byte at offset 2");
  write_bytes(dir / "utf8.json", "{\"a\": \"\xff\"}");
  expect_contains(error_message([&] { read_json_file(dir / "utf8.json"); }), "invalid JSON");
  write_bytes(dir / "empty.json", "");
  expect_contains(error_message([&] { read_json_file(dir / "empty.json"); }), "invalid JSON");
  expect_contains(error_message([&] { read_json_file(dir / "missing.json"); }),
                  (dir / "missing.json").string() + ": cannot open: No such file or directory");
}

TEST(JsonFile, UnwritableValueIsAnErrorAndLeavesTheOldFile) {
  TempDir dir;
  write_json_file(dir / "c.json", {{"ok", true}});
  const std::string message = error_message([&] { write_json_file(dir / "c.json", {{"bad", "\xff"}}); });
  expect_contains(message, "cannot write '" + (dir / "c.json").string() + "'");
  expect_contains(message, "UTF-8");
  EXPECT_EQ(read_json_file(dir / "c.json"), nlohmann::json({{"ok", true}}));
}

}  // namespace
}  // namespace difftx::io
