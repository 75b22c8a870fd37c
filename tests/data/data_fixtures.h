// Helpers for the data tests: the fetched data folder (skip when absent), temporary folders,
// and small tokenizers built in memory.
#pragma once
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/rng.h"
#include "data/data_paths.h"

namespace difftx::data::testing {

// True when scripts/setup has fetched what the test needs under data_root().
inline bool have_data(const std::string& relative) {
  return std::filesystem::exists(data_root() / relative);
}

#define DIFFTX_REQUIRE_DATA(relative)                                                          \
  do {                                                                                         \
    if (!::difftx::data::testing::have_data(relative))                                         \
      GTEST_SKIP() << (::difftx::data::data_root() / (relative)).string()                      \
                   << " is missing: run scripts/setup to fetch the tokenizer files and corpora"; \
  } while (0)

// A fresh empty folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("difftx_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Writes bytes to path()/name (creating subfolders) and returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& bytes) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// Random valid UTF-8 of about `bytes` bytes that exercises every branch of the split patterns:
// words in several scripts and cases, contractions, digit runs, punctuation, runs of spaces,
// tabs and newlines (\r\n too), combining marks, 2-, 3- and 4-byte characters, emoji.
inline std::string random_text(Rng& rng, size_t bytes) {
  static const char* const kWords[] = {
      "the", "The", "whale", "Ishmael", "sea", "of", "and", "a", "I", "it's", "don't", "we'll",
      "HELLO", "x", "Straße", "naïve", "Привет", "мир", "こんにちは", "世界", "안녕", "עברית",
      "مرحبا", "ελληνικά", "e\u0301", "🐳", "🇺🇸", "👩‍⚕️", "<|endoftext|>", "<|fim_prefix|>"};
  static const char* const kGlue[] = {" ", "  ", "   ", "\n", "\n\n", "\r\n", "\t", " \n ",
                                      ", ", ". ", "!", "?", "'", "\"", "--", "—", "...", "(", ")",
                                      "/", "$", "%", "#", "0", "7", "12", "2024", "3.14", "1,000,000",
                                      "\u00a0", "\u3000", "'S", "'ll", "'VE"};
  std::string text;
  while (text.size() < bytes) {
    const uint64_t kind = rng.below(10);
    if (kind < 6) {
      text += kWords[rng.below(sizeof kWords / sizeof *kWords)];
    } else if (kind < 9) {
      text += kGlue[rng.below(sizeof kGlue / sizeof *kGlue)];
    } else {
      // A random code point from one of the UTF-8 length classes (never a surrogate).
      static const uint32_t kRanges[][2] = {
          {0x20, 0x7E}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFD}, {0x10000, 0x10FFFF}};
      const auto& r = kRanges[rng.below(5)];
      const uint32_t cp = r[0] + static_cast<uint32_t>(rng.below(r[1] - r[0] + 1));
      if (cp < 0x80) {
        text += static_cast<char>(cp);
      } else if (cp < 0x800) {
        text += static_cast<char>(0xC0 | cp >> 6);
        text += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        text += static_cast<char>(0xE0 | cp >> 12);
        text += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        text += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        text += static_cast<char>(0xF0 | cp >> 18);
        text += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
        text += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        text += static_cast<char>(0x80 | (cp & 0x3F));
      }
    }
  }
  return text;
}

}  // namespace difftx::data::testing
