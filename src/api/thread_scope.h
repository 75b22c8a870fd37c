// OpenMP threads for the calls of an embedding program that asked for a number of them.
#pragma once

namespace difftx::api {

// While alive: OpenMP regions started by this thread use `threads` threads (0: unchanged).
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace difftx::api
