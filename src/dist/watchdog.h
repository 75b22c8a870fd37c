// Bounded waits: a communicator that ends this process when a collective of the one it wraps
// has waited longer than a timeout. When a rank dies, mpirun normally stops the job itself; a
// rank that hangs (stopped, deadlocked, its host unreachable without a reset) would leave the
// others blocked forever. The watchdog turns that into a clear message and exit status 1,
// after which mpirun stops the remaining ranks.
#pragma once
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "dist/communicator.h"

namespace difftx::dist {

class WatchdogCommunicator final : public Communicator {
 public:
  WatchdogCommunicator(std::unique_ptr<Communicator> inner, double timeout_seconds);
  ~WatchdogCommunicator() override;

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string description() const override { return inner_->description(); }
  void all_reduce(void* data, int64_t n, DType type) override;
  void reduce_scatter_sum(const float* send, float* recv, int64_t shard) override;
  void all_gather_bytes(void* data, int64_t bytes) override;
  void broadcast(void* data, int64_t bytes, int root) override;
  void stop_all_ranks(int code) override { inner_->stop_all_ranks(code); }

 private:
  class Armed;  // arms the watchdog for the lifetime of one collective
  void watch();

  std::unique_ptr<Communicator> inner_;
  std::chrono::duration<double> timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  const char* operation_ = nullptr;  // the collective in progress, or null
  std::chrono::steady_clock::time_point deadline_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace difftx::dist
