// Helpers for the file-format tests: scratch directories, raw file bytes, fixture paths.
#pragma once
#include <gtest/gtest.h>
#include "source_dir.h"
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/error.h"

namespace difftx::testing {

// A fresh directory under the system temporary directory, removed with its contents at exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("difftx-io-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Plain (non-atomic) write, for building test inputs. The old file is removed first rather
// than truncated: ext4 flushes truncated-and-rewritten files on close, which is slow.
inline void write_bytes(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::remove(path);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::filesystem::path fixture_path(const std::string& relative) {
  return std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests" / "fixtures" / relative;
}

// A safetensors file image: 8-byte little-endian length of `header`, the header, the data.
inline std::string safetensors_bytes(std::string_view header, std::string_view data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.append(header);
  out.append(data);
  return out;
}

// A test failure unless `message` contains `part`.
inline void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

// The message of the difftx::Error that f() throws, or "" when it throws none.
template <typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace difftx::testing
