#include "data/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "io/input_file.h"

namespace difftx::data {

std::string read_file(const std::filesystem::path& path) { return read_whole_file(path); }

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), temp_(path_.string() + ".tmp") {
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  DIFFTX_CHECK(fd_ >= 0, temp_.string(), ": cannot create (", std::strerror(errno), ")");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    DIFFTX_CHECK(n > 0, temp_.string(), ": write failed (", std::strerror(errno), ")");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::write_at(uint64_t offset, const void* data, size_t bytes) {
  const ssize_t n = ::pwrite(fd_, data, bytes, static_cast<off_t>(offset));
  DIFFTX_CHECK(n == static_cast<ssize_t>(bytes), temp_.string(), ": write failed (",
               std::strerror(errno), ")");
}

void AtomicFile::commit() {
  DIFFTX_CHECK(fd_ >= 0, path_.string(), ": already committed");
  DIFFTX_CHECK(::fsync(fd_) == 0, temp_.string(), ": fsync failed (", std::strerror(errno), ")");
  ::close(fd_);
  fd_ = -1;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    fail(path_.string(), ": cannot rename the temporary file into place (", std::strerror(err), ")");
  }
}

}  // namespace difftx::data
