// The collectives data-parallel training needs, behind one small interface so the trainer
// does not know what carries them: a size-1 local implementation (local_communicator.h), MPI
// (a plugin the binary loads only under mpirun: launch.h), and later NCCL on GPUs. Every call
// is blocking and collective: all ranks make the same calls in the same order with the same
// sizes. Errors throw difftx::Error; a rank that stops answering is the watchdog's business
// (watchdog.h).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace difftx::dist {

// An error that every rank raises at the same point, from values they share (an all-reduced
// loss, the startup check): no rank is left waiting, so the ranks can end normally and rank 0
// alone reports it.
struct CollectiveError : Error {
  using Error::Error;
};

// Element types of reductions (sums only: all the trainer needs).
enum class DType { f32, f64, u64 };

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // What carries the collectives, for logs: "local", "mpi (Open MPI v4.1.4, 2 ranks)".
  virtual std::string description() const = 0;

  // data[0, n) <- its sum over the ranks, in place.
  virtual void all_reduce(void* data, int64_t n, DType type) = 0;
  // send holds size() shards of `shard` floats; recv[0, shard) <- the sum over the ranks of
  // their shard rank(). (Equal shards, as NCCL wants them; callers pad.)
  virtual void reduce_scatter_sum(const float* send, float* recv, int64_t shard) = 0;
  // data holds size() shards of `bytes` bytes, this rank's own in place; on return shard r
  // holds rank r's.
  virtual void all_gather_bytes(void* data, int64_t bytes) = 0;
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
  // Makes every rank's process end with `code` (MPI_Abort); may return on a rank where that
  // is not yet done. Use abort().
  virtual void stop_all_ranks(int code) = 0;

  // Ends every rank's process now with `code` (after a rank's error, so that no other rank
  // waits for it in a collective).
  [[noreturn]] void abort(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    stop_all_ranks(code);
    std::_Exit(code);
  }

  // Typed conveniences.
  void all_reduce_sum(double* data, int64_t n) { all_reduce(data, n, DType::f64); }
  void all_reduce_sum(uint64_t* data, int64_t n) { all_reduce(data, n, DType::u64); }
  void all_gather(float* data, int64_t shard) { all_gather_bytes(data, shard * int64_t(sizeof(float))); }
};

// The interface's version, checked when a plugin is loaded (bump on any change above).
inline constexpr int kCommunicatorInterfaceVersion = 1;

}  // namespace difftx::dist
