// How the fused ops split work over OpenMP threads (internal to src/kernels).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace difftx::kernels {

// Below this many floats touched, starting an OpenMP team costs more than it saves.
constexpr int64_t kParallelMinFloats = int64_t{1} << 16;

inline bool worth_parallel(int64_t floats) { return floats >= kParallelMinFloats; }

// The share [begin, end) of n columns that the calling thread owns inside a parallel region,
// in blocks of 16 floats (a cache line of aligned data), to keep false sharing down. Used by
// reductions over rows into a per-column buffer (gain and embedding gradients): each thread
// sums its own columns over all rows in row order, so the result does not depend on the
// number of threads.
struct ColumnShare {
  int64_t begin, end;
};
inline ColumnShare column_share(int64_t n) {
  const int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
  const int64_t blocks = (n + 15) / 16;
  const int64_t per = (blocks + threads - 1) / threads;
  return {std::min(n, me * per * 16), std::min(n, (me + 1) * per * 16)};
}

}  // namespace difftx::kernels
