// A read-only memory map of a whole file (RAII). Errors name the file.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>

namespace difftx::data {

// Unmaps `bytes` bytes at a MappedFile's address.
struct Unmap {
  size_t bytes = 0;
  void operator()(const unsigned char* p) const;
};

class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);

  const unsigned char* data() const { return map_.get(); }
  size_t size() const { return map_.get_deleter().bytes; }

 private:
  std::unique_ptr<const unsigned char, Unmap> map_;  // null for an empty file
};

}  // namespace difftx::data
