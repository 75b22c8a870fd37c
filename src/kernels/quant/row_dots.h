// Dot products of a few weight rows with a few F32 vectors, per storage type: the inner loop of
// the decode GEMV and of its batched form, matmul's gemv order (internal to src/kernels/quant).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/quant/matmul.h"
#include "kernels/isa.h"

namespace difftx::kernels::quant {}  // the GEMMs (gemm_int8.h, gemm_float.h), called through their dispatch
namespace difftx::kernels::DIFFTX_ISA::quant {
using namespace ::difftx::kernels::quant;

constexpr int kRowsPerDot = 4;  // weight rows per call: each load of x feeds this many rows
constexpr int kXRowsPerDot = 4;  // rows of x per call at most: each weight unpacked feeds this many

// Rows of a 2048-wide quantized matrix are 1-2 KB: too short for the hardware prefetcher to
// get going within one, so the kernels prefetch the same place kPrefetchRows rows ahead (the
// next group of rows, which follows the current one in memory).
constexpr int kPrefetchRows = 2 * kRowsPerDot;

// The kRowsPerDot weight rows of a call: rows r0 .. r0 + n - 1 of W.
struct Rows {
  const uint8_t* p[kRowsPerDot];  // unused slots repeat the last row (their sums are dropped)
  int n;                          // rows in use
  int64_t ahead;                  // bytes to the same place kPrefetchRows rows on
  // Fetches the cache line `offset` bytes into the row kPrefetchRows rows after row r.
  void prefetch(int r, int64_t offset) const { __builtin_prefetch(p[r] + offset + ahead); }
  // Row r as an array of a block type's blocks.
  template <class Block>
  const Block* blocks(int r) const {
    return reinterpret_cast<const Block*>(p[r]);
  }
};

inline Rows row_pointers(const WeightMatrix& W, int64_t r0, int n) {
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);
  Rows rows;
  rows.n = n;
  rows.ahead = kPrefetchRows * row_bytes;
  for (int i = 0; i < kRowsPerDot; ++i)
    rows.p[i] = static_cast<const uint8_t*>(W.data) + (r0 + std::min(i, n - 1)) * row_bytes;
  return rows;
}

// x as the row dots read it, prepared once per GEMV.
struct PreparedX {
  const float* x = nullptr;
  // sums[b]: the sum of x[32b .. 32b + 32) as the kernel multiplies x, exact for the F32 row dots
  // (Q4_K), of x' = d q for the int8 ones (every type; Q4_K's minimums, int8_x.h)
  std::vector<float> sums;
  // For the int8 dot products (VNNI, AVX2): x quantized in blocks of 32 as Q8_0 is (d =
  // max|x| / 127, q = round(x / d)), two blocks A, B per 64 bytes, for Q4_0 in the order A[0:16],
  // B[0:16], A[16:32], B[16:32] (that of its unpacked nibbles), else A then B; per 16 int32
  // lanes of such a pair, the block scale of each lane and -8 times the sum of the lane's four q.
  std::vector<int8_t> q;
  std::vector<float> lane_scales;
  std::vector<int32_t> lane_offsets;
};

// out[j * kRowsPerDot + i] = W[r0 + i] . x[j] for i < n, j < m (1 <= n <= kRowsPerDot, 1 <= m <=
// kXRowsPerDot). Each (weight row, x row) sum takes the same floating-point steps whatever m and
// the other rows of x are, so its bits depend on its two rows only (batch invariance).
using RowDots = void (*)(const WeightMatrix& W, const PreparedX* x, int m, int64_t r0, int n, float* out);

// Runs K::run<m> for the call's m rows of x (the RowDots signature).
template <class K>
void by_x_rows(const WeightMatrix& W, const PreparedX* x, int m, int64_t r0, int n, float* out) {
  switch (m) {
    case 1: return K::template run<1>(W, x, r0, n, out);
    case 2: return K::template run<2>(W, x, r0, n, out);
    case 3: return K::template run<3>(W, x, r0, n, out);
    default: return K::template run<4>(W, x, r0, n, out);
  }
}
static_assert(kXRowsPerDot == 4, "by_x_rows covers 1 to 4 rows of x");

// A row dot of one x row at a time, as a RowDots: the x rows one after another.
using OneRowDots = void (*)(const WeightMatrix& W, const PreparedX& x, int64_t r0, int n, float* out);
template <OneRowDots kDots>
void each_x_row(const WeightMatrix& W, const PreparedX* x, int m, int64_t r0, int n, float* out) {
  for (int j = 0; j < m; ++j) kDots(W, x[j], r0, n, out + j * kRowsPerDot);
}

// The kernels of each type and level are in the level's type table (type_kernels.h), where each
// row-dots source registers its own.

// Fills px for the row dots of `type` (the int8 pairs only where that kernel uses them).
void prepare_x(WeightType type, bool int8_pairs, const float* x, int64_t cols, PreparedX& px);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
