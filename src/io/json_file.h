// JSON files: read with errors that name the file and the position, write atomically and
// pretty-printed (2-space indent, trailing newline). nlohmann-json is the JSON library.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace difftx::io {

nlohmann::json read_json_file(const std::filesystem::path& path);
// A file that holds one JSON object, or nullopt where there is no such file (a model directory's
// optional config files); any other value is an error naming the file.
std::optional<nlohmann::json> read_json_object_if_present(const std::filesystem::path& path);
// Arrays and objects nested deeper than this are refused: the parser, the destructor and dump()
// recurse per level, so a hostile 100,000-deep value would overflow the stack.
inline constexpr int kMaxJsonDepth = 256;

// Parses JSON text; `source` names it in errors ("SOURCE: invalid JSON: parse error at line L,
// column C: ..."). A NUL byte is an error too: nlohmann would stop there and ignore the rest.
// Also refused: nesting deeper than kMaxJsonDepth, and a key repeated within one object
// (nlohmann would keep the last silently), and, where max_keys > 0, an object with more keys than
// that. `callback`, if any, sees every event after these checks.
nlohmann::json parse_json_text(std::string_view text, const std::string& source,
                               const nlohmann::json::parser_callback_t& callback = nullptr, int64_t max_keys = 0);

// A JSON value for an error message: compact, at most ~60 characters, valid UTF-8, and cheap
// however large the value (arrays and objects are shown by their size).
std::string json_value_for_message(const nlohmann::json& value);
void write_json_file(const std::filesystem::path& path, const nlohmann::json& value);

// nlohmann's message without its "[json.exception.parse_error.101] " tag: for parse errors it
// reads "parse error at line L, column C: <what was wrong>".
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace difftx::io
