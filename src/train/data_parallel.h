// ZeRO-1 data parallelism over a parameter arena (docs/DISTRIBUTED.md).
//
// The arena is cut into buckets and every bucket into size() equal pieces; rank r owns piece r
// of each bucket. After the backward pass each rank receives the sum of every rank's gradients
// over its own pieces (a reduce-scatter per bucket), updates those parameters and their AdamW
// moments (train/optimizer.h, which holds only the owned pieces), and sends them to every rank
// (an all-gather per bucket). So every rank ends a step with the same parameters by
// construction (each value is a copy of one rank's update), the optimizer's memory and work
// are divided by the number of ranks, and the traffic is that of one all-reduce. Buckets bound
// the size of each collective (MPI counts are ints).
//
// With one rank, a shard is laid out exactly like the arena, and nothing is copied or sent.
#pragma once
#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "dist/communicator.h"
#include "train/optimizer.h"

namespace difftx::train {

class DataParallel {
 public:
  // arena_floats: the weights arena's size; bucket_floats: the target bucket size (rounded to
  // a multiple of 16 x size() floats, so every piece stays 64-byte aligned).
  DataParallel(dist::Communicator& comm, int64_t arena_floats, int64_t bucket_floats);

  // Arenas the collectives move (weights, gradients, moment arenas) need this many floats:
  // the arena rounded up to whole pieces. The padding must stay zero.
  int64_t padded_floats() const { return padded_; }
  // This rank's pieces, in shard order (for AdamW).
  const std::vector<ArenaPiece>& owned_pieces() const { return owned_; }
  int64_t bucket_count() const { return static_cast<int64_t>(buckets_.size()); }

  // The sum over ranks of each rank's gradient arena `grads`, over this rank's pieces (a
  // shard). Scale the gradients before, so that the sum is the mean. One rank: grads itself.
  const float* reduce_gradients(const float* grads);
  // Every rank's pieces of `arena` (after each rank updated its own) to every rank.
  void all_gather(float* arena);
  // root's whole arena to every rank.
  void broadcast(float* arena, int root);

  // Checkpoints hold the moments as whole arenas. The arena for a moment shard: the shard
  // itself with one rank, else `scratch` (resized to padded_floats()).
  float* moment_arena(float* shard, Buffer<float>& scratch) const;
  // Collective: fills moment_arena(shard, ...) with every rank's pieces.
  void gather_moments(const float* shard, float* arena);
  // Collective: rank root's whole moment arena to every rank, whose shard takes its pieces.
  void scatter_moments(float* arena, float* shard, int root);

  // Collective: throws a CollectiveError if the ranks' arenas are not bit-identical.
  void verify_replicas(const float* arena, int64_t step);

 private:
  // For every owned piece, copy between the arena (at the piece) and the shard (packed).
  template <typename Copy>
  void for_each_owned(Copy copy) const;

  dist::Communicator& comm_;
  int64_t padded_ = 0;
  std::vector<ArenaPiece> buckets_;
  std::vector<ArenaPiece> owned_;
  Buffer<float> reduced_;  // the reduced gradient shard (more than one rank)
};

}  // namespace difftx::train
