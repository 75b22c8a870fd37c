#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace difftx {

namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

}  // namespace

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(path.string(), ": cannot open: ", errno_text(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fail(path.string(), ": cannot stat: ", errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail(path.string(), ": not a regular file");
  }
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

}  // namespace difftx
