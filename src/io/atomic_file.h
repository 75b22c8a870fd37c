// Atomic file replacement: a reader of `target` sees either the old file or the complete new
// one, never a partial write, even across a crash. The bytes go to a temporary file in the
// same directory (".NAME.tmp.PID.N"), which is fsynced and renamed over the target; then the
// directory is fsynced so the rename itself is durable. A writer that fails or is destroyed
// before commit() removes its temporary file and leaves the target untouched. (A process
// killed mid-write cannot clean up: it leaves a stale ".NAME.tmp.*" file, never a bad target.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace difftx::io {

class AtomicFileWriter {
 public:
  // Creates the temporary file; Error (naming the target) if the directory is not writable.
  explicit AtomicFileWriter(std::filesystem::path target);
  ~AtomicFileWriter();  // without commit(): removes the temporary file
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends after the furthest byte written.
  void write(const void* data, size_t bytes);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // Writes at `offset`: overwrites bytes already written (a header filled in last) or extends.
  void write_at(uint64_t offset, const void* data, size_t bytes);
  // fsync, rename over the target, fsync the directory. Call once; no writes after it.
  void commit();

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temporary() const { return temp_; }

 private:
  void discard() noexcept;

  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  uint64_t end_ = 0;  // one past the furthest byte written
  bool temp_exists_ = false;
};

// Replaces `target` with `bytes` atomically.
void write_file_atomically(const std::filesystem::path& target, std::string_view bytes);

}  // namespace difftx::io
