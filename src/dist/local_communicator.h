// The communicator of a single process (rank 0 of 1): every collective is a copy or nothing.
#pragma once
#include "dist/communicator.h"

namespace difftx::dist {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string description() const override { return "local"; }
  void all_reduce(void*, int64_t, DType) override {}
  void reduce_scatter_sum(const float* send, float* recv, int64_t shard) override;
  void all_gather_bytes(void*, int64_t) override {}
  void broadcast(void*, int64_t, int) override {}
  void stop_all_ranks(int) override {}
};

}  // namespace difftx::dist
