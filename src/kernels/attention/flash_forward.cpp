#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "core/error.h"
#include "core/threading.h"
#include "kernels/attention/flash.h"
#include "kernels/attention/flash_pack.h"
#include "kernels/attention/flash_pairs.h"
#include "kernels/attention/flash_tile.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace flash {
namespace {

// A sliding window (AttentionDims::window) on the score tile S of query rows q0 .. q0 + nq - 1
// against keys k0 ..: the keys before a row's window get a score of -inf, which the online
// softmax turns into a probability of 0 (the SIMD exp2 floors at 2^-126, as for the causal
// mask on a row's first tile: a weight far below any visible key's).
void mask_before_window(float* S, int64_t nq, int64_t q0, int64_t k0, int64_t window) {
  for (int64_t r = 0; r < nq; ++r) {
    const int64_t hidden = std::min(kTile, q0 + r - window + 1 - k0);  // columns left of the window
    for (int64_t c = 0; c < hidden; ++c) S[r * kTile + c] = -INFINITY;
  }
}

}  // namespace

Path default_path(const AttentionDims& dims) {
  return simd_compiled() && dims.d % 16 == 0 ? Path::simd : Path::scalar;
}

void check_path(Path path, const AttentionDims& dims) {
  DIFFTX_CHECK(path == Path::scalar || (simd_compiled() && dims.d % 16 == 0),
               "flash attention: the SIMD path needs an AVX-512, AVX2 or NEON build and d % 16 == 0, got d=", dims.d);
}

// Longer than our ~80-line rule on purpose: the whole call is one OpenMP parallel region (packs,
// a barrier, the work items), and the per-thread scratch carved inside it is used by every
// phase; cut into functions, each would take the dozen locals of the layout and the scratch.
void forward(Path path, const AttentionDims& dims, const float* q, const float* k, const float* v,
             const float* lambda, float* out, AttentionSaved saved) {
  dims.validate();
  flash::check_path(path, dims);  // qualified: argument-dependent lookup also finds the dispatcher
  const char* kind = attention_kind_name(dims.kind);
  const bool baseline = !dims.variant().paired();
  DIFFTX_CHECK(q && k && v && out, "attention_forward (", kind, "): tensors q, k, v and out must not be null");
  DIFFTX_CHECK(baseline || lambda, "attention_forward (", kind, "): tensor lambda must not be null");
  DIFFTX_CHECK(saved.lse, "attention_forward (", kind, "): saved.lse must not be null (",
               attention_lse_floats(dims), " floats)");
  DIFFTX_CHECK(baseline || saved.maps_out, "attention_forward (", kind, "): saved.maps_out must not be null (",
               attention_maps_out_floats(dims), " floats)");

  const MapLayout L(dims);
  const int64_t B = dims.B, T = dims.T, d = dims.d, dv = L.dv, maps = L.maps, G = L.groups;
  const int64_t m = L.maps_per_group, tiles = L.tiles;
  const int threads = thread_count();

  // Scratch: packed queries and key tiles (O(T)), then per thread one score tile and the
  // running output, max and sum of every map of a group for one query tile.
  ScratchLayout plan;
  const int64_t at_q = plan.reserve(B * maps * T * d);
  const int64_t at_k = plan.reserve(transposed_tiles_floats(L, L.key_heads, d));
  const int64_t at_v = plan.reserve(transposed_tiles_floats(L, G, dv));
  const int64_t per_thread = kTile * kTile + m * kTile * (dv + 3) + 16 * 5;
  const int64_t at_threads = plan.reserve(threads * per_thread);
  float* base = scratch(plan.size());
  float* Qp = base + at_q;
  float* Kt = base + at_k;
  float* Vp = base + at_v;
  const float q_factor = static_cast<float>(std::numbers::log2e / std::sqrt(static_cast<double>(d)));

  // One parallel region for the whole call (each region start costs a wake-up of every thread,
  // and much more when another process holds a core): the packs, a barrier, the work items.
  float* a_out = baseline ? out : saved.maps_out;  // per-map outputs, [B, T, maps, dv]
#pragma omp parallel num_threads(threads)
  {
    pack_queries(L, q, q_factor, Qp);
    pack_transposed_tiles(L, k, L.key_heads, d, Kt);
    pack_row_tiles(L, v, G, dv, Vp);
#pragma omp barrier
    ScratchLayout mine;
    float* own = base + at_threads + thread_index() * per_thread;
    float* S = own + mine.reserve(kTile * kTile);
    float* O = own + mine.reserve(m * kTile * dv);
    float* row_max = own + mine.reserve(m * kTile);
    float* row_sum = own + mine.reserve(m * kTile);
    float* alpha = own + mine.reserve(m * kTile);
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < B * G * tiles; ++item) {
      const int64_t qt = tiles - 1 - item / (B * G), b = item % (B * G) / G, g = item % G;  // long rows first
      const int64_t q0 = qt * kTile, nq = std::min(kTile, T - q0);
      std::memset(O, 0, sizeof(float) * m * kTile * dv);
      std::fill(row_max, row_max + m * kTile, -INFINITY);
      std::fill(row_sum, row_sum + m * kTile, 0.0f);
      // with a window, the first key tile any row of this query tile sees
      const int64_t first_kt = dims.window > 0 ? std::max<int64_t>(0, q0 - dims.window + 1) / kTile : 0;
      for (int64_t kt = first_kt; kt <= qt; ++kt) {
        const int64_t k0 = kt * kTile, nk = std::min(kTile, T - k0);
        const float* v_tile = Vp + ((b * G + g) * tiles + kt) * kTile * dv;
        for (int64_t jj = 0; jj < m; ++jj) {
          const int64_t j = g * m + jj;
          const float* q_tile = Qp + ((b * maps + j) * T + q0) * d;
          const float* k_tile = Kt + ((b * L.key_heads + L.key_head(j)) * tiles + kt) * d * kTile;
          float* o = O + jj * kTile * dv;
          const bool diag = kt == qt;
          for_each_band(nq, diag, [&](int64_t r0, int64_t r1) {  // S = Q K^T
            const int64_t keys = diag ? r1 : nk;
            tile_gemm(path, r1 - r0, score_columns(keys), d, q_tile + r0 * d, d, 1, k_tile, kTile,
                      S + r0 * kTile, kTile, false);
          });
          if (dims.window > 0 && k0 < q0 + nq - dims.window) mask_before_window(S, nq, q0, k0, dims.window);
          softmax_online_step(path, nq, S, diag, row_max + jj * kTile, row_sum + jj * kTile, alpha + jj * kTile);
          for_each_band(nq, diag, [&](int64_t r0, int64_t r1) {  // O = alpha * O + P V
            const int64_t keys = diag ? r1 : nk;
            tile_gemm(path, r1 - r0, dv, keys, S + r0 * kTile, kTile, 1, v_tile, dv, o + r0 * dv, dv, true,
                      alpha + jj * kTile + r0);
          });
        }
      }
      for (int64_t jj = 0; jj < m; ++jj) {
        const int64_t j = g * m + jj;
        for (int64_t r = 0; r < nq; ++r) {
          const float l = row_sum[jj * kTile + r], inv = 1.0f / l;
          const float* o = O + (jj * kTile + r) * dv;
          float* y = a_out + ((b * T + q0 + r) * maps + j) * dv;
          for (int64_t x = 0; x < dv; ++x) y[x] = o[x] * inv;
          saved.lse[(b * maps + j) * T + q0 + r] =
              static_cast<float>((row_max[jj * kTile + r] + std::log2(l)) * std::numbers::ln2);
        }
      }
      if (!baseline) pair_rows(L, a_out, lambda, out, b, q0, nq, g * dims.H / G, dims.H / G);  // this group's heads
    }
  }
}

}  // namespace flash

void attention_forward(const AttentionDims& dims, const float* q, const float* k, const float* v,
                       const float* lambda, float* out, AttentionSaved saved) {
  flash::forward(flash::default_path(dims), dims, q, k, v, lambda, out, saved);
}

}  // namespace difftx::kernels::DIFFTX_ISA
