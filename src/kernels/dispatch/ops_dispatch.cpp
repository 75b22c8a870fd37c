// The fused ops of ops.h, each a call to the CPU level's copy (dispatch.h).
#include "kernels/dispatch/dispatch.h"
#include "kernels/ops.h"

namespace difftx {

DIFFTX_LEVELS_DECLARE(rmsnorm_forward)
DIFFTX_LEVELS_DECLARE(rmsnorm_backward)
DIFFTX_LEVELS_DECLARE(rope_inverse_frequency)
DIFFTX_LEVELS_DECLARE(rope_table_floats)
DIFFTX_LEVELS_DECLARE(rope_table_build)
DIFFTX_LEVELS_DECLARE(rope_forward)
DIFFTX_LEVELS_DECLARE(rope_backward)
DIFFTX_LEVELS_DECLARE(swiglu_forward)
DIFFTX_LEVELS_DECLARE(swiglu_backward)
DIFFTX_LEVELS_DECLARE(cross_entropy_forward_backward)
DIFFTX_LEVELS_DECLARE(cross_entropy_sum)
DIFFTX_LEVELS_DECLARE(adamw_update)
DIFFTX_LEVELS_DECLARE(sum_of_squares)

void rmsnorm_forward(const float* x, const float* g, float* y, float* rstd, int64_t rows, int64_t n, float eps) {
  DIFFTX_LEVEL_CALL(rmsnorm_forward)(x, g, y, rstd, rows, n, eps);
}
void rmsnorm_backward(const float* x, const float* g, const float* rstd, const float* dy, float* dx, float* dg,
                      int64_t rows, int64_t n) {
  DIFFTX_LEVEL_CALL(rmsnorm_backward)(x, g, rstd, dy, dx, dg, rows, n);
}
double rope_inverse_frequency(int64_t i, int64_t d, double theta, const RopeScaling& scaling) {
  return DIFFTX_LEVEL_CALL(rope_inverse_frequency)(i, d, theta, scaling);
}
int64_t rope_table_floats(int64_t max_T, int64_t d) { return DIFFTX_LEVEL_CALL(rope_table_floats)(max_T, d); }
RopeTable rope_table_build(float* storage, int64_t max_T, int64_t d, double theta, const RopeScaling& scaling) {
  return DIFFTX_LEVEL_CALL(rope_table_build)(storage, max_T, d, theta, scaling);
}
void rope_forward(const RopeTable& table, RopeStyle style, float* x, int64_t B, int64_t T, int64_t heads,
                  int64_t pos0) {
  DIFFTX_LEVEL_CALL(rope_forward)(table, style, x, B, T, heads, pos0);
}
void rope_backward(const RopeTable& table, RopeStyle style, float* dx, int64_t B, int64_t T, int64_t heads,
                   int64_t pos0) {
  DIFFTX_LEVEL_CALL(rope_backward)(table, style, dx, B, T, heads, pos0);
}
void swiglu_forward(const float* g, const float* u, float* h, int64_t n) {
  DIFFTX_LEVEL_CALL(swiglu_forward)(g, u, h, n);
}
void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n) {
  DIFFTX_LEVEL_CALL(swiglu_backward)(g, u, dh, dg, du, n);
}
double cross_entropy_forward_backward(const float* logits, const int32_t* targets, float* dlogits, int64_t rows,
                                      int64_t V, int32_t ignore_id, int64_t* count_out) {
  return DIFFTX_LEVEL_CALL(cross_entropy_forward_backward)(logits, targets, dlogits, rows, V, ignore_id, count_out);
}
double cross_entropy_sum(const float* logits, const int32_t* targets, int64_t rows, int64_t V, int32_t ignore_id,
                         int64_t* count_out) {
  return DIFFTX_LEVEL_CALL(cross_entropy_sum)(logits, targets, rows, V, ignore_id, count_out);
}
void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWParams& hp, float grad_scale) {
  DIFFTX_LEVEL_CALL(adamw_update)(p, g, m, v, n, hp, grad_scale);
}
double sum_of_squares(const float* x, int64_t n) { return DIFFTX_LEVEL_CALL(sum_of_squares)(x, n); }

}  // namespace difftx
