// A 4 x 4 float transpose in NEON registers, for the per-level sources that repack tiles and
// panels (flash_pack.cpp, quant/gemm_float.cpp).
#pragma once
#include "kernels/isa.h"

#ifdef __ARM_NEON
#include <arm_neon.h>

namespace difftx::DIFFTX_ISA {

// v[i][j] becomes v[j][i]: pairs of rows interleaved (trn of 32-bit lanes), then their halves
// (trn of 64-bit lanes).
inline void transpose4(float32x4_t (&v)[4]) {
  const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(v[0], v[1]));
  const float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(v[0], v[1]));
  const float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(v[2], v[3]));
  const float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(v[2], v[3]));
  v[0] = vreinterpretq_f32_f64(vtrn1q_f64(t0, t2));
  v[1] = vreinterpretq_f32_f64(vtrn1q_f64(t1, t3));
  v[2] = vreinterpretq_f32_f64(vtrn2q_f64(t0, t2));
  v[3] = vreinterpretq_f32_f64(vtrn2q_f64(t1, t3));
}

}  // namespace difftx::DIFFTX_ISA
#endif
