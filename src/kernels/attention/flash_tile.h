// Tile primitives of the flash kernels, each with a SIMD version (register-tiled; AVX-512 when
// __AVX512F__ is defined, else AVX2 + FMA when those are, NEON on ARM) and a portable scalar
// version that the tests also run.
// Score tiles are kTile (64) columns wide and hold scores in log2 units (the queries are
// pre-scaled by log2(e) / sqrt(d)), so that every exponential is a 2^x.
#pragma once
#include <cstdint>

#include "kernels/attention/flash.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::flash {
using namespace ::difftx::kernels::flash;  // Path, the layout (flash_layout.h) and the pair steps (flash_pairs.h)

// Whether the SIMD path was compiled in; it needs every tile width (d, dv, 64) to be a
// multiple of 16.
bool simd_compiled();

// C[r][0:n] = start(r) + sum_{kk < K} A(r, kk) * B[kk][0:n] for r < rows, where
//   A(r, kk) = a[r * a_rs + kk * a_ks]   (any strides: A may be read transposed),
//   B row kk = b + kk * b_rs             (n contiguous floats),
//   C row r  = c + r * c_rs,
//   start(r) = 0 when !accumulate, else C[r] * row_scale[r] (row_scale null: C[r]).
// Path::simd needs n % 16 == 0.
void tile_gemm(Path path, int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
               const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate,
               const float* row_scale = nullptr);

// One step of the online softmax over a score tile S [rows][kTile] (log2 units). For each row r:
// on the causal diagonal tile (diag) keys c > r are masked; m_new = max(m[r], max_c S[r][c]);
// S[r][c] <- 2^(S[r][c] - m_new) (0 where masked); alpha[r] = 2^(m[r] - m_new);
// l[r] <- l[r] * alpha[r] + sum_c S[r][c]; m[r] <- m_new.
void softmax_online_step(Path path, int64_t rows, float* S, bool diag, float* m, float* l, float* alpha);

// Backward: recomputes the probabilities from the saved natural-log lse of each row:
// S[r][c] <- 2^(S[r][c] - lse[r] * log2(e)), 0 where masked (diag: c > r).
void softmax_recompute(Path path, int64_t rows, float* S, bool diag, const float* lse);

// Backward through softmax and the score scale: dP[r][c] <- P[r][c] * (dP[r][c] - D[r]) * scale,
// and 0 where masked (diag: c > r; those dP entries may be stale and are never read).
void softmax_grad(Path path, int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale);

}  // namespace difftx::kernels::DIFFTX_ISA::flash
