#include "train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.h"

namespace difftx::train {

namespace {

// The PID the holder wrote, or "unknown" (it may be between taking the lock and writing it).
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  return digits ? text : "unknown";
}

}  // namespace

RunDirectoryLock::RunDirectoryLock(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / ".lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  DIFFTX_CHECK(fd_ >= 0, path.string(), ": cannot open the run's lock file (", std::strerror(errno), ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = holder_pid(fd_);
    ::close(fd_);
    fd_ = -1;
    DIFFTX_CHECK(err != EWOULDBLOCK, run_dir.string(), ": another difftx train (pid ", pid,
                 ") is using this run directory; wait for it to finish or train into another one");
    fail(path.string(), ": cannot lock (", std::strerror(err), ")");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    fail(path.string(), ": cannot write the lock holder's PID (", std::strerror(err), ")");
  }
}

RunDirectoryLock::~RunDirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace difftx::train
