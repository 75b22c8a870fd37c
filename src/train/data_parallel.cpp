#include "train/data_parallel.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/hash.h"

namespace difftx::train {

DataParallel::DataParallel(dist::Communicator& comm, int64_t arena_floats, int64_t bucket_floats) : comm_(comm) {
  DIFFTX_CHECK(bucket_floats > 0, "bucket size ", bucket_floats, " floats must be positive");
  const int64_t unit = 16 * comm.size();
  padded_ = (arena_floats + unit - 1) / unit * unit;
  const int64_t bucket = std::max(unit, bucket_floats / unit * unit);
  for (int64_t begin = 0; begin < padded_; begin += bucket) {
    const int64_t end = std::min(padded_, begin + bucket), piece = (end - begin) / comm.size();
    buckets_.push_back({begin, end});
    owned_.push_back({begin + comm.rank() * piece, begin + (comm.rank() + 1) * piece});
  }
  if (comm.size() > 1) {
    int64_t shard = 0;
    for (const ArenaPiece& p : owned_) shard += p.end - p.begin;
    reduced_.resize(shard);
  }
}

template <typename Copy>
void DataParallel::for_each_owned(Copy copy) const {
  int64_t at = 0;
  for (const ArenaPiece& p : owned_) {
    copy(p.begin, at, p.end - p.begin);
    at += p.end - p.begin;
  }
}

const float* DataParallel::reduce_gradients(const float* grads) {
  if (comm_.size() == 1) return grads;
  int64_t at = 0;
  for (const ArenaPiece& b : buckets_) {
    const int64_t piece = (b.end - b.begin) / comm_.size();
    comm_.reduce_scatter_sum(grads + b.begin, reduced_.data() + at, piece);
    at += piece;
  }
  return reduced_.data();
}

void DataParallel::all_gather(float* arena) {
  if (comm_.size() == 1) return;
  for (const ArenaPiece& b : buckets_) comm_.all_gather(arena + b.begin, (b.end - b.begin) / comm_.size());
}

void DataParallel::broadcast(float* arena, int root) {
  if (comm_.size() == 1) return;
  for (const ArenaPiece& b : buckets_)
    comm_.broadcast(arena + b.begin, (b.end - b.begin) * static_cast<int64_t>(sizeof(float)), root);
}

float* DataParallel::moment_arena(float* shard, Buffer<float>& scratch) const {
  if (comm_.size() == 1) return shard;
  scratch.resize(padded_);
  return scratch.data();
}

void DataParallel::gather_moments(const float* shard, float* arena) {
  if (comm_.size() == 1) return;
  for_each_owned([&](int64_t arena_at, int64_t shard_at, int64_t n) {
    std::memcpy(arena + arena_at, shard + shard_at, sizeof(float) * n);
  });
  all_gather(arena);
}

void DataParallel::scatter_moments(float* arena, float* shard, int root) {
  if (comm_.size() == 1) return;
  broadcast(arena, root);
  for_each_owned([&](int64_t arena_at, int64_t shard_at, int64_t n) {
    std::memcpy(shard + shard_at, arena + arena_at, sizeof(float) * n);
  });
}

void DataParallel::verify_replicas(const float* arena, int64_t step) {
  if (comm_.size() == 1) return;
  std::vector<uint64_t> hashes(comm_.size());
  hashes[comm_.rank()] = hash64(arena, sizeof(float) * padded_);
  comm_.all_gather_bytes(hashes.data(), sizeof(uint64_t));
  for (int r = 1; r < comm_.size(); ++r)
    if (hashes[r] != hashes[0])
      throw dist::CollectiveError(concat("step ", step, ": the parameters of rank ", r,
                                         " differ from rank 0's (the data-parallel replicas diverged)"));
}

}  // namespace difftx::train
