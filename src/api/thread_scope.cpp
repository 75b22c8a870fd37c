#include "api/thread_scope.h"

#include <omp.h>

namespace difftx::api {

ThreadScope::ThreadScope(int threads) : saved_(threads > 0 ? omp_get_max_threads() : 0) {
  if (threads > 0) omp_set_num_threads(threads);
}

ThreadScope::~ThreadScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

}  // namespace difftx::api
