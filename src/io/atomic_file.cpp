#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace difftx::io {

namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

std::filesystem::path directory_of(const std::filesystem::path& target) {
  const auto parent = target.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

// fsync of a directory makes a rename in it durable. Filesystems that cannot sync
// directories answer EINVAL; there is nothing more to do on those.
void sync_directory(const std::filesystem::path& dir, const std::filesystem::path& target) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(target.string(), ": written, but cannot open its directory to sync it: ", errno_text(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL)
    fail(target.string(), ": written, but syncing its directory failed: ", errno_text(err));
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::filesystem::path target) : target_(std::move(target)) {
  DIFFTX_CHECK(!target_.filename().empty(), "cannot write '", target_.string(), "': not a file name");
  static std::atomic<uint64_t> counter{0};
  const std::string stem = std::string(".").append(target_.filename().string()).append(".tmp.")
                               .append(std::to_string(::getpid())).append(".");
  // O_EXCL: never reuse a name another writer holds; mode 0666 lets the umask decide, as
  // for any newly created file.
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp_ = directory_of(target_) / (stem + std::to_string(counter.fetch_add(1)));
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) {
      temp_exists_ = true;
      return;
    }
    if (errno != EEXIST) break;
  }
  fail("cannot write '", target_.string(), "': cannot create a temporary file in '",
       directory_of(target_).string(), "': ", errno_text(errno));
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (temp_exists_) ::unlink(temp_.c_str());
  temp_exists_ = false;
}

void AtomicFileWriter::write(const void* data, size_t bytes) { write_at(end_, data, bytes); }

void AtomicFileWriter::write_at(uint64_t offset, const void* data, size_t bytes) {
  DIFFTX_CHECK(fd_ >= 0, "cannot write '", target_.string(), "': writer already committed or failed");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, std::min<size_t>(bytes, size_t{1} << 30), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      discard();
      fail("cannot write '", target_.string(), "': ", errno_text(err), " (the previous file, if any, is unchanged)");
    }
    p += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
  end_ = std::max(end_, offset);
}

void AtomicFileWriter::commit() {
  DIFFTX_CHECK(fd_ >= 0, "cannot commit '", target_.string(), "': writer already committed or failed");
  const auto fail_and_discard = [this](const char* step) {
    const int err = errno;
    discard();
    fail("cannot write '", target_.string(), "': ", step, " failed: ", errno_text(err),
         " (the previous file, if any, is unchanged)");
  };
  if (::fsync(fd_) != 0) fail_and_discard("fsync");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail_and_discard("close");
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail_and_discard("rename");
  temp_exists_ = false;
  sync_directory(directory_of(target_), target_);
}

void write_file_atomically(const std::filesystem::path& target, std::string_view bytes) {
  AtomicFileWriter writer(target);
  writer.write(bytes);
  writer.commit();
}

}  // namespace difftx::io
