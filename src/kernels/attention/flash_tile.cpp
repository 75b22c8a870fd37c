#include "kernels/attention/flash_tile.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/attention/flash_layout.h"
#include "kernels/isa.h"
#include "kernels/simd.h"

namespace difftx::kernels::DIFFTX_ISA::flash {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

// ---------------------------------------------------------------- portable scalar versions

void tile_gemm_scalar(int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
                      const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate,
                      const float* row_scale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * c_rs;
    const float start = row_scale ? row_scale[r] : 1.0f;
    for (int64_t x = 0; x < n; ++x) cr[x] = accumulate ? cr[x] * start : 0.0f;
    for (int64_t kk = 0; kk < K; ++kk) {
      const float w = a[r * a_rs + kk * a_ks];
      const float* bk = b + kk * b_rs;
      for (int64_t x = 0; x < n; ++x) cr[x] += w * bk[x];
    }
  }
}

void softmax_online_step_scalar(int64_t rows, float* S, bool diag, float* m, float* l, float* alpha) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const int64_t valid = diag ? r + 1 : kTile;
    float mx = -INFINITY;
    for (int64_t c = 0; c < valid; ++c) mx = std::max(mx, s[c]);
    const float m_new = std::max(m[r], mx);
    const float base = m_new == -INFINITY ? 0.0f : m_new;
    float sum = 0;
    for (int64_t c = 0; c < kTile; ++c) sum += (s[c] = c < valid ? std::exp2(s[c] - base) : 0.0f);
    alpha[r] = std::exp2(m[r] - base);
    l[r] = l[r] * alpha[r] + sum;
    m[r] = m_new;
  }
}

void softmax_recompute_scalar(int64_t rows, float* S, bool diag, const float* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const int64_t valid = diag ? r + 1 : kTile;
    const float base = lse[r] * kLog2e;
    for (int64_t c = 0; c < kTile; ++c) s[c] = c < valid ? std::exp2(s[c] - base) : 0.0f;
  }
}

void softmax_grad_scalar(int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t valid = diag ? r + 1 : kTile;
    for (int64_t c = 0; c < kTile; ++c)
      dP[r * kTile + c] = c < valid ? P[r * kTile + c] * (dP[r * kTile + c] - D[r]) * scale : 0.0f;
  }
}

#if DIFFTX_SIMD_FMA
// ---------------------------------------------------------------- vector versions (Highway)

const FloatTag d;
constexpr int kLanes = static_cast<int>(hn::MaxLanes(d));  // AVX3 16, AVX2 8, NEON 4
static_assert(kTile % 16 == 0 && kLanes <= 16);

// A register block of C: R rows x NV vectors, accumulated over K in registers.
// Per kk: NV loads of B, R broadcasts of A, R*NV FMAs.
template <int R, int NV>
inline void gemm_block(int64_t K, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_rs,
                       float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  FloatVec acc[R][NV];
  for (int r = 0; r < R; ++r) {
    const FloatVec s = hn::Set(d, row_scale ? row_scale[r] : 1.0f);
    for (int v = 0; v < NV; ++v)
      acc[r][v] = accumulate ? hn::Mul(hn::LoadU(d, c + r * c_rs + kLanes * v), s) : hn::Zero(d);
  }
  for (int64_t kk = 0; kk < K; ++kk) {
    const float* bk = b + kk * b_rs;
    const float* ak = a + kk * a_ks;
    FloatVec bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = hn::LoadU(d, bk + kLanes * v);
    for (int r = 0; r < R; ++r) {
      const FloatVec ar = hn::Set(d, ak[r * a_rs]);
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(ar, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, c + r * c_rs + kLanes * v);
}

// Every row of one column chunk of NV vectors: blocks of kRows rows, then one block of the rest.
template <int NV, int kRows>
void gemm_columns(int64_t rows, int64_t K, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                  int64_t b_rs, float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  int64_t r = 0;
  auto block = [&]<int R>() {
    gemm_block<R, NV>(K, a + r * a_rs, a_rs, a_ks, b, b_rs, c + r * c_rs, c_rs, accumulate,
                      row_scale ? row_scale + r : nullptr);
  };
  for (; r + kRows <= rows; r += kRows) block.template operator()<kRows>();
  [&]<int... kR>(std::integer_sequence<int, kR...>) {  // rows - r in 1 .. kRows - 1
    ((rows - r == kR + 1 ? block.template operator()<kR + 1>() : void()), ...);
  }(std::make_integer_sequence<int, kRows - 1>());
}

// Chunks of 4 vectors of columns against blocks of 6 rows (24 accumulators) where the target has
// 32 vector registers (AVX3, NEON), of 2 vectors (12) where it has 16 (AVX2); AVX3's last 16 to
// 48 columns in chunks of 2 vectors and 1, 12 rows a block. Every output is the same FMA chain.
void tile_gemm_simd(int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
                    const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate,
                    const float* row_scale) {
  constexpr int kVecs = HWY_TARGET == HWY_AVX2 ? 2 : 4;
  int64_t col = 0;
  for (; col + kVecs * kLanes <= n; col += kVecs * kLanes)
    gemm_columns<kVecs, 6>(rows, K, a, a_rs, a_ks, b + col, b_rs, c + col, c_rs, accumulate, row_scale);
  if constexpr (kVecs > 2)
    for (; col + 2 * kLanes <= n; col += 2 * kLanes)
      gemm_columns<2, 12>(rows, K, a, a_rs, a_ks, b + col, b_rs, c + col, c_rs, accumulate, row_scale);
  for (; col < n; col += kLanes)
    gemm_columns<1, 12>(rows, K, a, a_rs, a_ks, b + col, b_rs, c + col, c_rs, accumulate, row_scale);
}

// 2^x for x <= 0: 2^x = 2^n * 2^f with n = round(x) in [-126, 0], f in [-1/2, 1/2], 2^f by its
// degree-6 Taylor polynomial in f*ln2 (relative error ~1e-7, float precision); 2^n is a normal
// float built in the exponent field, or on AVX3 applied by vscalefps (p * 2^n rounded once, as
// the multiply). Inputs below -126 give 2^-126 (callers zero masked lanes explicitly); NaN
// propagates (Max returns its second operand).
inline FloatVec exp2_ps(FloatVec x) {
  x = hn::Max(hn::Set(d, -126.0f), x);
  const FloatVec n = hn::Round(x);
  const FloatVec f = hn::Sub(x, n);
  FloatVec p = hn::Set(d, 1.5403530393381606e-4f);
  p = hn::MulAdd(p, f, hn::Set(d, 1.3333558146428443e-3f));
  p = hn::MulAdd(p, f, hn::Set(d, 9.6181291076284772e-3f));
  p = hn::MulAdd(p, f, hn::Set(d, 5.5504108664821580e-2f));
  p = hn::MulAdd(p, f, hn::Set(d, 2.4022650695910071e-1f));
  p = hn::MulAdd(p, f, hn::Set(d, 6.9314718055994531e-1f));
  p = hn::MulAdd(p, f, hn::Set(d, 1.0f));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return FloatVec{_mm512_maskz_scalef_ps(0xFFFF, p.raw, n.raw)};  // (maskz: see exp_vec)
#else
  // n + 1.5 * 2^23 holds the integer n in its low mantissa bits.
  const hn::RebindToSigned<FloatTag> di;
  const auto n_bits = hn::Sub(hn::BitCast(di, hn::Add(n, hn::Set(d, 12582912.0f))), hn::Set(di, 0x4B400000 - 127));
  return hn::Mul(p, hn::BitCast(d, hn::ShiftLeft<23>(n_bits)));
#endif
}

// The lanes of vector v (keys kLanes v .. kLanes v + kLanes - 1) that are causally visible from
// row r of a diagonal tile (every lane when !diag).
inline hn::Mask<FloatTag> visible(int64_t r, int v, bool diag) {
  return hn::FirstN(d, diag ? static_cast<size_t>(std::clamp<int64_t>(r + 1 - kLanes * v, 0, kLanes)) : kLanes);
}

constexpr int kVecs = kTile / kLanes;
constexpr int kChains = 16 / kLanes;  // vectors per 16 floats

// R rows of softmax_online_step at once: each row's horizontal max and sum is a long dependency
// chain, and R independent rows let the core overlap them. The tile rows are read from L1 twice
// (max, then exponentials). Each row's sum adds the 16-float groups of the row lane for lane, in
// order, and then the 16 lanes by halves (sum_halves): the same order at every width.
template <int R>
inline void softmax_online_rows(int64_t r0, float* S, bool diag, float* m, float* l, float* alpha) {
  static_assert(R <= kLanes, "one vector 2^x for the rows' alphas");
  const FloatVec neg_inf = hn::Set(d, -INFINITY);
  float base[R];
  alignas(64) float shift[kLanes] = {};  // m_old - base of each row, for one vector 2^x
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    FloatVec mx = neg_inf;
    for (int v = 0; v < kVecs; ++v)
      mx = hn::Max(mx, hn::IfThenElse(visible(r, v, diag), hn::LoadU(d, S + r * kTile + kLanes * v), neg_inf));
    const float m_new = std::max(m[r], hn::GetLane(hn::MaxOfLanes(d, mx)));
    base[i] = m_new == -INFINITY ? 0.0f : m_new;
    shift[i] = m[r] - base[i];  // -inf on a row's first tile: alpha = 2^-126, times l = O = 0
    m[r] = m_new;
  }
  alignas(64) float scale[kLanes];
  hn::Store(exp2_ps(hn::Load(d, shift)), d, scale);
  for (int i = 0; i < R; ++i) alpha[r0 + i] = scale[i];
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    const FloatVec vbase = hn::Set(d, base[i]);
    FloatVec sum[kChains];
    for (auto& s : sum) s = hn::Zero(d);
    for (int v = 0; v < kVecs; ++v) {
      float* s = S + r * kTile + kLanes * v;
      const FloatVec p = hn::IfThenElseZero(visible(r, v, diag), exp2_ps(hn::Sub(hn::LoadU(d, s), vbase)));
      hn::StoreU(p, d, s);
      sum[v % kChains] = hn::Add(sum[v % kChains], p);
    }
    for (int half = kChains / 2; half > 0; half /= 2)  // the upper half of the 16 floats onto the lower
      for (int c = 0; c < half; ++c) sum[c] = hn::Add(sum[c], sum[c + half]);
    l[r] = l[r] * alpha[r] + sum_halves(d, sum[0]);
  }
}

void softmax_recompute_simd(int64_t rows, float* S, bool diag, const float* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const FloatVec base = hn::Set(d, lse[r] * kLog2e);
    for (int v = 0; v < kVecs; ++v) {
      const FloatVec p = exp2_ps(hn::Sub(hn::LoadU(d, s + kLanes * v), base));
      hn::StoreU(hn::IfThenElseZero(visible(r, v, diag), p), d, s + kLanes * v);
    }
  }
}

void softmax_grad_simd(int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  const FloatVec vscale = hn::Set(d, scale);
  for (int64_t r = 0; r < rows; ++r) {
    const FloatVec dr = hn::Set(d, D[r]);
    for (int v = 0; v < kVecs; ++v) {
      float* g = dP + r * kTile + kLanes * v;
      const FloatVec p = hn::LoadU(d, P + r * kTile + kLanes * v);
      const FloatVec ds = hn::Mul(hn::Mul(p, hn::Sub(hn::LoadU(d, g), dr)), vscale);
      hn::StoreU(hn::IfThenElseZero(visible(r, v, diag), ds), d, g);
    }
  }
}

void softmax_online_step_simd(int64_t rows, float* S, bool diag, float* m, float* l, float* alpha) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) softmax_online_rows<4>(r, S, diag, m, l, alpha);
  for (; r < rows; ++r) softmax_online_rows<1>(r, S, diag, m, l, alpha);
}
#endif  // DIFFTX_SIMD_FMA

}  // namespace

bool simd_compiled() {
#if DIFFTX_SIMD_FMA
  return true;
#else
  return false;
#endif
}

#if DIFFTX_SIMD_FMA
#define DIFFTX_FLASH_DISPATCH(name, ...) \
  return path == Path::simd ? name##_simd(__VA_ARGS__) : name##_scalar(__VA_ARGS__)
#else
#define DIFFTX_FLASH_DISPATCH(name, ...) return name##_scalar(__VA_ARGS__)
#endif

void tile_gemm(Path path, int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
               const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  DIFFTX_FLASH_DISPATCH(tile_gemm, rows, n, K, a, a_rs, a_ks, b, b_rs, c, c_rs, accumulate, row_scale);
}

void softmax_online_step(Path path, int64_t rows, float* S, bool diag, float* m, float* l, float* alpha) {
  DIFFTX_FLASH_DISPATCH(softmax_online_step, rows, S, diag, m, l, alpha);
}

void softmax_recompute(Path path, int64_t rows, float* S, bool diag, const float* lse) {
  DIFFTX_FLASH_DISPATCH(softmax_recompute, rows, S, diag, lse);
}

void softmax_grad(Path path, int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  DIFFTX_FLASH_DISPATCH(softmax_grad, rows, P, dP, diag, D, scale);
}

#undef DIFFTX_FLASH_DISPATCH

}  // namespace difftx::kernels::DIFFTX_ISA::flash
