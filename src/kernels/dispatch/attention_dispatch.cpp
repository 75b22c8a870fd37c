// The fused attention kernels (attention.h, flash.h, decode_attention.h), each a call to the CPU
// level's copy (dispatch.h).
#include "kernels/attention/attention.h"
#include "kernels/attention/decode_attention.h"
#include "kernels/attention/flash.h"
#include "kernels/dispatch/dispatch.h"

namespace difftx {

DIFFTX_LEVELS_DECLARE(attention_forward)
DIFFTX_LEVELS_DECLARE(attention_backward)
DIFFTX_LEVELS_DECLARE(decode_attention_rows)
DIFFTX_LEVELS_DECLARE_IN(flash, default_path)
DIFFTX_LEVELS_DECLARE_IN(flash, check_path)
DIFFTX_LEVELS_DECLARE_IN(flash, forward)
DIFFTX_LEVELS_DECLARE_IN(flash, backward)

void attention_forward(const AttentionDims& dims, const float* q, const float* k, const float* v, const float* lambda,
                       float* out, AttentionSaved saved) {
  DIFFTX_LEVEL_CALL(attention_forward)(dims, q, k, v, lambda, out, saved);
}
void attention_backward(const AttentionDims& dims, const float* q, const float* k, const float* v,
                        const float* lambda, const float* out, AttentionSaved saved, const float* dout, float* dq,
                        float* dk, float* dv, float* dlambda) {
  DIFFTX_LEVEL_CALL(attention_backward)(dims, q, k, v, lambda, out, saved, dout, dq, dk, dv, dlambda);
}
void decode_attention_rows(const DecodeAttentionDims& dims, std::span<const AttentionRow> rows,
                           DecodeAttentionScratch& scratch) {
  DIFFTX_LEVEL_CALL(decode_attention_rows)(dims, rows, scratch);
}

namespace flash {

Path default_path(const AttentionDims& dims) { return DIFFTX_LEVEL_CALL_IN(flash, default_path)(dims); }
void check_path(Path path, const AttentionDims& dims) { DIFFTX_LEVEL_CALL_IN(flash, check_path)(path, dims); }
void forward(Path path, const AttentionDims& dims, const float* q, const float* k, const float* v,
             const float* lambda, float* out, AttentionSaved saved) {
  DIFFTX_LEVEL_CALL_IN(flash, forward)(path, dims, q, k, v, lambda, out, saved);
}
void backward(Path path, const AttentionDims& dims, const float* q, const float* k, const float* v,
              const float* lambda, const float* out, AttentionSaved saved, const float* dout, float* dq, float* dk,
              float* dv, float* dlambda) {
  DIFFTX_LEVEL_CALL_IN(flash, backward)(path, dims, q, k, v, lambda, out, saved, dout, dq, dk, dv, dlambda);
}

}  // namespace flash
}  // namespace difftx
