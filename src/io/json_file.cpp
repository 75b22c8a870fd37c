#include "io/json_file.h"

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"

namespace difftx {

std::string json_error_text(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto tag_end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && tag_end != std::string::npos ? what.substr(tag_end + 2)
                                                                                  : what;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& source,
                               const nlohmann::json::parser_callback_t& callback) {
  const auto nul = text.find('\0');
  DIFFTX_CHECK(nul == std::string_view::npos, source, " has a NUL byte at offset ", nul, " (JSON allows none)");
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::parse_error& e) {
    fail(source, ": invalid JSON: ", json_error_text(e));
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_whole_file(path), path.string());
}

void write_json_file(const std::filesystem::path& path, const nlohmann::json& value) {
  std::string text;
  try {
    text = value.dump(2) + "\n";
  } catch (const nlohmann::json::type_error& e) {  // a string that is not valid UTF-8
    fail("cannot write '", path.string(), "': ", json_error_text(e));
  }
  write_file_atomically(path, text);
}

}  // namespace difftx
