#include "core/threading.h"

#include <omp.h>

namespace difftx {

int thread_count() { return omp_get_max_threads(); }
int thread_index() { return omp_get_thread_num(); }

}  // namespace difftx
