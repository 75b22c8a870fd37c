// Whole-file reads and crash-safe writes (temporary name, fsync, rename), with errors that
// name the file.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace difftx::data {

std::string read_file(const std::filesystem::path& path);

// Writes bytes to path so that readers see either the old file or the complete new one.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// An output file written under a temporary name and renamed into place by commit(); destroyed
// uncommitted (an error part-way), it removes the temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  void write_at(uint64_t offset, const void* data, size_t bytes);  // overwrite earlier bytes
  void commit();  // fsync, close, rename
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_, temp_;
  int fd_ = -1;
};

}  // namespace difftx::data
