// Reading files with errors that name the file: a whole-file read for small files (JSON, npy)
// and positioned reads for large ones (safetensors), which never map memory, so a file that
// shrinks under us gives an error instead of a SIGBUS.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

struct stat;

namespace difftx::io {

// Opens a regular file read-only and returns its descriptor, checking the type before the file
// can block us: a FIFO, a socket or a device is an Error naming the path, never a hang in open().
// `st` receives the file's status.
int open_regular_file(const std::filesystem::path& path, struct stat& st);

// Checks that `path` is a directory: an Error naming the path says that it does not exist (then
// `hint`, e.g. how to make one) or what it is instead. `what` names it: "model directory".
void require_directory(const std::filesystem::path& path, const std::string& what, const std::string& hint = "");

// The whole file as bytes. Error if it cannot be opened or read, or is not a regular file.
std::string read_whole_file(const std::filesystem::path& path);

// A regular file opened read-only; size() is fixed when it is opened.
class InputFile {
 public:
  explicit InputFile(const std::filesystem::path& path);
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads exactly `bytes` bytes at `offset` into dst; Error when the range lies beyond the
  // size seen at open or the file became shorter since. Safe to call from several threads.
  void read_at(uint64_t offset, void* dst, uint64_t bytes) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace difftx::io
