// What the row norms share (rmsnorm.cpp, layernorm.cpp): the checks, the inverse RMS, and how the
// forward and backward passes go over rows and threads. Included only by per-level sources, in an
// unnamed namespace so that each has its own copy whatever the compiler flags of the others.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "core/threading.h"
#include "kernels/isa.h"
#include "kernels/op_threading.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

void check_shape(const char* op, int64_t rows, int64_t n) {
  DIFFTX_CHECK(rows >= 0, op, ": rows must be >= 0, got ", rows);
  DIFFTX_CHECK(n > 0, op, ": row width n must be > 0, got ", n);
}

// 1 / sqrt(sum_sq / n + eps), computed in double.
inline float inverse_rms(float sum_sq, int64_t n, float eps) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_sq) / n + eps));
}

// The forward pass: row(r) for every row, the rows split over threads when the op is large.
template <typename Row>
void forward_rows(const char* op, int64_t rows, int64_t n, float eps, Row row) {
  check_shape(op, rows, n);
  DIFFTX_CHECK(eps >= 0, op, ": eps must be >= 0, got ", eps);
#pragma omp parallel for schedule(static) if (worth_parallel(rows * n))
  for (int64_t r = 0; r < rows; ++r) row(r);
}

// The backward pass: input_grad(r) writes row r's dx; param_grads(r, begin, end) adds row r's
// share of the parameter gradients over columns [begin, end). Either way each column adds the rows
// in ascending order, so the parameter gradients are bitwise the same whatever the thread count:
// one pass on one thread (each row still in L1 when its parameter gradients are added), else the
// threads split the rows for dx, then the columns (no per-thread copies of the gradients).
template <typename InputGrad, typename ParamGrads>
void backward_rows(const char* op, int64_t rows, int64_t n, InputGrad input_grad, ParamGrads param_grads) {
  check_shape(op, rows, n);
  if (!worth_parallel(rows * n) || thread_count() == 1) {
    for (int64_t r = 0; r < rows; ++r) {
      input_grad(r);
      param_grads(r, 0, n);
    }
    return;
  }
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) input_grad(r);
    const ColumnShare mine = column_share(n);
    for (int64_t r = 0; r < rows; ++r) param_grads(r, mine.begin, mine.end);
  }
}

}  // namespace
}  // namespace difftx::kernels::DIFFTX_ISA
