#include "core/parallel_errors.h"

namespace difftx {

void ParallelErrors::keep(int64_t item, std::exception_ptr error) noexcept {
#pragma omp critical(difftx_parallel_errors)
  if (item < first_failed_.load()) {
    error_ = std::move(error);
    first_failed_.store(item);
  }
}

}  // namespace difftx
