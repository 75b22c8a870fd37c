// Threading: OpenMP, shared with OpenBLAS (built for OpenMP) so the two never oversubscribe.
#pragma once

namespace difftx {

// Threads our parallel regions use (OMP_NUM_THREADS, else the core count).
int thread_count();
// The index of the calling thread inside a parallel region (0 outside one).
int thread_index();

}  // namespace difftx
