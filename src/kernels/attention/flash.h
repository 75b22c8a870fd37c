// The fused flash-style attention kernels behind attention_forward / attention_backward, with
// an explicit choice of tile path so that tests can run the portable scalar path as well.
//
// Forward (per map, FlashAttention-style): online softmax over key tiles of kTile keys; the
// per-row log-sum-exp goes to AttentionSaved::lse for the backward pass. Work items are
// (batch, value group, query tile), largest first, over OpenMP threads.
// Backward (FlashAttention-2): D = rowsum(dA o A); per key tile, recompute P from lse, then
// dV += P^T dA, dP = dA V^T, dS = P o (dP - D), dQ += dS K / sqrt(d), dK += dS^T Q / sqrt(d).
// No buffer is ever T x T: all scratch is O(T) (flash_layout.h).
#pragma once
#include "kernels/attention/attention.h"
#include "kernels/isa.h"

namespace difftx::kernels::flash {
// The tile primitives' implementation (flash_tile.h): register-tiled SIMD (AVX-512, AVX2, NEON) for
// the CPU level, or the portable scalar code that the tests also run.
enum class Path { scalar, simd };
}  // namespace difftx::kernels::flash

namespace difftx::kernels::DIFFTX_ISA::flash {
using difftx::kernels::flash::Path;

// SIMD when the CPU level has it and d % 16 == 0, else scalar.
Path default_path(const AttentionDims& dims);
// Throws unless `path` can run these dims.
void check_path(Path path, const AttentionDims& dims);

void forward(Path path, const AttentionDims& dims, const float* q, const float* k, const float* v,
             const float* lambda, float* out, AttentionSaved saved);
void backward(Path path, const AttentionDims& dims, const float* q, const float* k, const float* v,
              const float* lambda, const float* out, AttentionSaved saved, const float* dout, float* dq,
              float* dk, float* dv, float* dlambda);

}  // namespace difftx::kernels::DIFFTX_ISA::flash
