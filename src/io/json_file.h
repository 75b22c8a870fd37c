// JSON files: read with errors that name the file and the position, write atomically and
// pretty-printed (2-space indent, trailing newline). nlohmann-json is the JSON library.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace difftx {

nlohmann::json read_json_file(const std::filesystem::path& path);
void write_json_file(const std::filesystem::path& path, const nlohmann::json& value);

// nlohmann's message without its "[json.exception.parse_error.101] " tag: for parse errors it
// reads "parse error at line L, column C: <what was wrong>".
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace difftx
