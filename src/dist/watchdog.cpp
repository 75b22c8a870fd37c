#include "dist/watchdog.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace difftx::dist {

class WatchdogCommunicator::Armed {
 public:
  Armed(WatchdogCommunicator& w, const char* operation) : w_(w) {
    std::lock_guard lock(w_.mutex_);
    w_.operation_ = operation;
    w_.deadline_ = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(w_.timeout_);
    w_.changed_.notify_one();
  }
  ~Armed() {
    std::lock_guard lock(w_.mutex_);
    w_.operation_ = nullptr;
  }

 private:
  WatchdogCommunicator& w_;
};

WatchdogCommunicator::WatchdogCommunicator(std::unique_ptr<Communicator> inner, double timeout_seconds)
    : inner_(std::move(inner)), timeout_(timeout_seconds) {
  DIFFTX_CHECK(timeout_seconds > 0, "collective timeout ", timeout_seconds, " s must be positive");
  thread_ = std::thread([this] { watch(); });
}

WatchdogCommunicator::~WatchdogCommunicator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

void WatchdogCommunicator::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!operation_) {
      changed_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < deadline_) {
      changed_.wait_until(lock, deadline_);
      continue;
    }
    // The main thread is blocked inside the collective: report and exit without finalising
    // MPI, which makes mpirun stop the other ranks.
    std::fprintf(stderr,
                 "difftx: error: rank %d of %d: %s has waited %g s for the other ranks; a rank died or hangs. "
                 "Stopping (the last checkpoint is intact; raise --collective-timeout if a step can "
                 "legitimately keep a rank waiting that long)\n",
                 inner_->rank(), inner_->size(), operation_, timeout_.count());
    std::fflush(stderr);
    std::_Exit(1);
  }
}

void WatchdogCommunicator::all_reduce(void* data, int64_t n, DType type) {
  Armed armed(*this, "all-reduce");
  inner_->all_reduce(data, n, type);
}

void WatchdogCommunicator::reduce_scatter_sum(const float* send, float* recv, int64_t shard) {
  Armed armed(*this, "reduce-scatter");
  inner_->reduce_scatter_sum(send, recv, shard);
}

void WatchdogCommunicator::all_gather_bytes(void* data, int64_t bytes) {
  Armed armed(*this, "all-gather");
  inner_->all_gather_bytes(data, bytes);
}

void WatchdogCommunicator::broadcast(void* data, int64_t bytes, int root) {
  Armed armed(*this, "broadcast");
  inner_->broadcast(data, bytes, root);
}

}  // namespace difftx::dist
