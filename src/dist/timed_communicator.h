// A communicator that adds up the wall time spent in the collectives of another one (the
// per-step communication time of training metrics). It includes the time a rank waits for
// slower ranks, which is what a step loses to communication.
#pragma once
#include <utility>

#include "core/timer.h"
#include "dist/communicator.h"

namespace difftx::dist {

class TimedCommunicator final : public Communicator {
 public:
  explicit TimedCommunicator(Communicator& inner) : inner_(inner) {}

  // Seconds spent in collectives since construction or the last take_seconds(), which resets.
  double take_seconds() { return std::exchange(seconds_, 0.0); }

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string description() const override { return inner_.description(); }
  void all_reduce(void* data, int64_t n, DType type) override {
    timed([&] { inner_.all_reduce(data, n, type); });
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t shard) override {
    timed([&] { inner_.reduce_scatter_sum(send, recv, shard); });
  }
  void all_gather_bytes(void* data, int64_t bytes) override {
    timed([&] { inner_.all_gather_bytes(data, bytes); });
  }
  void broadcast(void* data, int64_t bytes, int root) override {
    timed([&] { inner_.broadcast(data, bytes, root); });
  }
  void stop_all_ranks(int code) override { inner_.stop_all_ranks(code); }

 private:
  template <typename F>
  void timed(F&& f) {
    Timer timer;
    f();
    seconds_ += timer.seconds();
  }

  Communicator& inner_;
  double seconds_ = 0;
};

}  // namespace difftx::dist
