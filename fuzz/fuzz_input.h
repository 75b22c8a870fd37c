// Shared by the libFuzzer targets: the input bytes as a file, for readers that take a path.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace difftx::fuzz {

// A directory of this process's own, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    Dir() : path(std::filesystem::temp_directory_path() / ("difftx-fuzz-" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
    std::filesystem::path path;
  };
  static const Dir dir;
  return dir.path;
}

// Writes bytes to scratch_dir()/name (replacing it) and returns the path.
inline std::filesystem::path write_input(const std::string& name, std::string_view bytes) {
  const std::filesystem::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace difftx::fuzz
