// An exclusive lock on a run directory, so two `difftx train` processes never write one run's
// checkpoints and metrics at once. The lock is flock() on RUN_DIR/.lock, which holds the
// holder's PID for the message a second process gets; the kernel releases it when the holder
// exits, however it exits, so a killed run never leaves a stale lock.
#pragma once
#include <filesystem>

namespace difftx::train {

class RunDirectoryLock {
 public:
  // Takes the lock or throws an Error naming the directory and the PID that holds it.
  explicit RunDirectoryLock(const std::filesystem::path& run_dir);
  ~RunDirectoryLock();
  RunDirectoryLock(const RunDirectoryLock&) = delete;
  RunDirectoryLock& operator=(const RunDirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace difftx::train
