// Token embedding: rows of the table gathered by id, and their gradient scattered back.
#include <cstring>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"

namespace difftx::kernels {

void embedding_forward(const float* table, const int32_t* ids, float* y, int64_t rows, int64_t n,
                       int64_t V) {
  DIFFTX_CHECK(rows >= 0 && n > 0 && V > 0,
               "embedding_forward: expected rows >= 0, n > 0, V > 0, got rows=", rows, " n=", n,
               " V=", V);
  for (int64_t r = 0; r < rows; ++r)
    DIFFTX_CHECK(ids[r] >= 0 && ids[r] < V, "embedding_forward: token id ", ids[r], " at position ",
                 r, " is outside the vocabulary [0, ", V, ")");
#pragma omp parallel for schedule(static) if (worth_parallel(rows * n))
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(y + r * n, table + static_cast<int64_t>(ids[r]) * n, n * sizeof(float));
}

void embedding_backward(const int32_t* ids, const float* dy, float* dtable, int64_t rows,
                        int64_t n) {
  DIFFTX_CHECK(rows >= 0 && n > 0, "embedding_backward: expected rows >= 0, n > 0, got rows=", rows,
               " n=", n);
  // Threads split the columns, not the rows: a repeated id then never races, and each table
  // entry sums its rows in position order whatever the thread count.
#pragma omp parallel if (worth_parallel(rows * n))
  {
    const ColumnShare mine = column_share(n);
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = dtable + static_cast<int64_t>(ids[r]) * n;
      const float* src = dy + r * n;
#pragma omp simd
      for (int64_t j = mine.begin; j < mine.end; ++j) dst[j] += src[j];
    }
  }
}

}  // namespace difftx::kernels
