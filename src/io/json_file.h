// JSON files: read with errors that name the file and the position, write atomically and
// pretty-printed (2-space indent, trailing newline). nlohmann-json is the JSON library.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace difftx {

nlohmann::json read_json_file(const std::filesystem::path& path);
// Parses JSON text; `source` names it in errors ("SOURCE: invalid JSON: parse error at line L,
// column C: ..."). A NUL byte is an error too: nlohmann would stop there and ignore the rest.
nlohmann::json parse_json_text(std::string_view text, const std::string& source,
                               const nlohmann::json::parser_callback_t& callback = nullptr);
void write_json_file(const std::filesystem::path& path, const nlohmann::json& value);

// nlohmann's message without its "[json.exception.parse_error.101] " tag: for parse errors it
// reads "parse error at line L, column C: <what was wrong>".
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace difftx
