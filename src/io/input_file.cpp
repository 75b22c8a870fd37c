#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace difftx::io {

namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

// What a path that is not the regular file or directory asked for is instead.
const char* file_kind(mode_t mode) {
  return S_ISREG(mode)    ? "a file"
         : S_ISDIR(mode)  ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISSOCK(mode) ? "a socket"
                          : "a device";
}

}  // namespace

int open_regular_file(const std::filesystem::path& path, struct stat& st) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. It is cleared
  // again below (it means nothing for regular files, but reads should block normally).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) fail(path.string(), ": cannot open: ", errno_text(errno));
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(path.string(), ": cannot stat: ", errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path.string(), ": not a regular file (", file_kind(st.st_mode), "); expected a file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    fail(path.string(), ": cannot set blocking mode: ", errno_text(err));
  }
  return fd;
}

void require_directory(const std::filesystem::path& path, const std::string& what, const std::string& hint) {
  DIFFTX_CHECK(!path.empty(), "the ", what, " is named by an empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) fail(path.string(), ": the ", what, " does not exist", hint);
    fail(path.string(), ": cannot read the ", what, ": ", errno_text(err));
  }
  if (S_ISDIR(st.st_mode)) return;
  fail(path.string(), ": the ", what, " must be a directory, and this is ", file_kind(st.st_mode));
}

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  struct stat st {};
  fd_ = open_regular_file(path, st);
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

void InputFile::read_at(uint64_t offset, void* dst, uint64_t bytes) const {
  DIFFTX_CHECK(offset <= size_ && bytes <= size_ - offset, path_.string(), ": read of ", bytes,
               " bytes at offset ", offset, " is beyond the end of the file (", size_, " bytes)");
  auto* out = static_cast<char*>(dst);
  while (bytes > 0) {
    const uint64_t chunk = std::min<uint64_t>(bytes, uint64_t{1} << 30);
    const ssize_t got = ::pread(fd_, out, chunk, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(path_.string(), ": read failed at offset ", offset, ": ", errno_text(errno));
    }
    DIFFTX_CHECK(got > 0, path_.string(), ": file ended at offset ", offset,
                 " (it was ", size_, " bytes when opened; was it truncated meanwhile?)");
    out += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
}

std::string read_whole_file(const std::filesystem::path& path) {
  InputFile file(path);
  std::string bytes(file.size(), '\0');
  file.read_at(0, bytes.data(), bytes.size());
  return bytes;
}

}  // namespace difftx::io
