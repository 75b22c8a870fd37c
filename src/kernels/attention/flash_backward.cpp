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
constexpr int64_t kZeroBlock = 1 << 14;  // floats zeroed per work item
}  // namespace

// Longer than our ~80-line rule on purpose, like flash::forward: one OpenMP parallel region
// for the whole call, whose per-thread scratch and the key-tile step (the key_tile lambda, which
// captures the layout and the packed tensors) serve both the single-pass and the split-KV
// schedules; as separate functions they would pass the same twenty locals around.
void backward(Path path, const AttentionDims& dims, const float* q, const float* k, const float* v,
              const float* lambda, const float* out, AttentionSaved saved, const float* dout, float* dq, float* dk,
              float* dv, float* dlambda) {
  dims.validate();
  DIFFTX_CHECK(dims.window == 0, "attention_backward: a sliding window (", dims.window,
               ") has no fused backward; only its forward is implemented");
  check_path(path, dims);
  const char* kind = attention_kind_name(dims.kind);
  const bool baseline = !dims.variant().paired();
  DIFFTX_CHECK(q && k && v && dout && dq && dk && dv, "attention_backward (", kind,
               "): tensors q, k, v, dout, dq, dk and dv must not be null");
  DIFFTX_CHECK(saved.lse, "attention_backward (", kind, "): saved.lse (from attention_forward) must not be null");
  DIFFTX_CHECK(!baseline || out, "attention_backward (baseline): tensor out must not be null");
  DIFFTX_CHECK(baseline || saved.maps_out, "attention_backward (", kind,
               "): saved.maps_out (from attention_forward) must not be null");
  DIFFTX_CHECK(baseline || (lambda && dlambda), "attention_backward (", kind,
               "): tensors lambda and dlambda must not be null");

  const MapLayout L(dims);
  const int64_t B = dims.B, T = dims.T, d = dims.d, dvw = L.dv, maps = L.maps, G = L.groups;
  const int64_t m = L.maps_per_group, tiles = L.tiles, kpg = L.keys_per_group;
  const int64_t qw = dims.q_width(), kw = dims.k_width(), vw = dims.v_width();
  const int threads = thread_count();
  // Enough (batch, group) pairs keep every thread busy with whole groups, each owning its dq
  // columns. Otherwise the key tiles of each group are dealt round-robin into `chunks` chunks
  // (tile kt to chunk kt % chunks), each adding its dq share into a private copy; threads take
  // chunks dynamically, and the copies are summed in chunk order, so the result does not depend
  // on timing.
  const bool by_group = B * G >= 4 * threads;
  const int64_t chunks = by_group ? 0 : std::min<int64_t>(2 * threads, tiles);

  ScratchLayout plan;
  const int64_t at_q = plan.reserve(B * maps * T * d);
  const int64_t at_k = plan.reserve(transposed_tiles_floats(L, L.key_heads, d));
  const int64_t at_kr = plan.reserve(transposed_tiles_floats(L, L.key_heads, d));
  const int64_t at_v = plan.reserve(transposed_tiles_floats(L, G, dvw));
  const int64_t at_da = plan.reserve(B * maps * T * dvw);
  const int64_t at_D = plan.reserve(B * maps * T);
  const int64_t at_row_dlambda = plan.reserve(B * T);
  const int64_t partial_floats = B * T * qw;
  const int64_t at_partial = plan.reserve(chunks * partial_floats);
  const int64_t per_thread = 2 * kTile * kTile + kpg * kTile * d + kTile * dvw + 16 * 4;
  const int64_t at_threads = plan.reserve(threads * per_thread);
  float* base = scratch(plan.size());
  float *Qp = base + at_q, *Kt = base + at_k, *Kr = base + at_kr, *Vt = base + at_v, *dA = base + at_da;
  float* D = base + at_D;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const float dk_unscale = static_cast<float>(1.0 / (std::numbers::log2e * scale));  // Qp carries log2e/sqrt(d)

  // All contributions of key tile kt of (b, g): its dK and dV rows (overwritten) and its share
  // of dQ (added into dq_target, laid out like dq).
  auto key_tile = [&](int64_t b, int64_t g, int64_t kt, float* dq_target, float* own) {
    ScratchLayout mine;
    float* P = own + mine.reserve(kTile * kTile);
    float* dS = own + mine.reserve(kTile * kTile);
    float* dK = own + mine.reserve(kpg * kTile * d);
    float* dV = own + mine.reserve(kTile * dvw);
    const int64_t k0 = kt * kTile, nk = std::min(kTile, T - k0);
    std::memset(dK, 0, sizeof(float) * kpg * kTile * d);
    std::memset(dV, 0, sizeof(float) * kTile * dvw);
    const float* v_tile = Vt + ((b * G + g) * tiles + kt) * dvw * kTile;
    for (int64_t qt = kt; qt < tiles; ++qt) {
      const int64_t q0 = qt * kTile, nq = std::min(kTile, T - q0);
      for (int64_t jj = 0; jj < m; ++jj) {
        const int64_t j = g * m + jj, kh = L.key_head(j), row0 = (b * maps + j) * T + q0;
        const float* q_tile = Qp + row0 * d;
        const float* dA_tile = dA + row0 * dvw;
        const float* k_tile = Kt + ((b * L.key_heads + kh) * tiles + kt) * d * kTile;
        const float* k_rows = Kr + ((b * L.key_heads + kh) * tiles + kt) * kTile * d;
        float* dK_head = dK + (kh - g * kpg) * kTile * d;
        const bool diag = qt == kt;
        for_each_band(nq, diag, [&](int64_t r0, int64_t r1) {  // S = Q K^T and dP = dA V^T
          const int64_t cols = score_columns(diag ? r1 : nk);
          tile_gemm(path, r1 - r0, cols, d, q_tile + r0 * d, d, 1, k_tile, kTile, P + r0 * kTile, kTile, false);
          tile_gemm(path, r1 - r0, cols, dvw, dA_tile + r0 * dvw, dvw, 1, v_tile, kTile, dS + r0 * kTile, kTile,
                    false);
        });
        softmax_recompute(path, nq, P, diag, saved.lse + row0);
        softmax_grad(path, nq, P, dS, diag, D + row0, static_cast<float>(scale));
        for_each_band(nk, diag, [&](int64_t c0, int64_t c1) {  // key rows [c0, c1) are seen by queries [first, nq)
          const int64_t first = diag ? c0 : 0;
          tile_gemm(path, c1 - c0, dvw, nq - first, P + first * kTile + c0, 1, kTile, dA_tile + first * dvw, dvw,
                    dV + c0 * dvw, dvw, true);  // dV += P^T dA
          tile_gemm(path, c1 - c0, d, nq - first, dS + first * kTile + c0, 1, kTile, q_tile + first * d, d,
                    dK_head + c0 * d, d, true);  // dK += dS^T Q
        });
        for_each_band(nq, diag, [&](int64_t r0, int64_t r1) {  // dQ += dS K
          tile_gemm(path, r1 - r0, d, diag ? r1 : nk, dS + r0 * kTile, kTile, 1, k_rows, d,
                    dq_target + (b * T + q0 + r0) * qw + j * d, qw, true);
        });
      }
    }
    for (int64_t c = 0; c < nk; ++c) {
      for (int64_t h = 0; h < kpg; ++h) {
        float* dst = dk + (b * T + k0 + c) * kw + (g * kpg + h) * d;
        const float* src = dK + (h * kTile + c) * d;
        for (int64_t x = 0; x < d; ++x) dst[x] = src[x] * dk_unscale;
      }
      std::memcpy(dv + (b * T + k0 + c) * vw + g * dvw, dV + c * dvw, sizeof(float) * dvw);
    }
  };

  float* partials = base + at_partial;
  float* dq_sums = by_group ? dq : partials;  // zeroed, then key tiles add their dQ shares
  const int64_t dq_floats = (by_group ? 1 : chunks) * partial_floats;
  // One parallel region for the whole call (see flash_forward.cpp): packs and output gradients,
  // a barrier, the key tiles.
#pragma omp parallel num_threads(threads)
  {
    pack_queries(L, q, static_cast<float>(std::numbers::log2e * scale), Qp);
    pack_transposed_tiles(L, k, L.key_heads, d, Kt);
    pack_row_tiles(L, k, L.key_heads, d, Kr);
    pack_transposed_tiles(L, v, G, dvw, Vt);
    output_grads(L, baseline ? out : saved.maps_out, lambda, dout, dA, D, base + at_row_dlambda, dlambda);
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < dq_floats; i += kZeroBlock)
      std::memset(dq_sums + i, 0, sizeof(float) * std::min(kZeroBlock, dq_floats - i));
#pragma omp barrier
    float* own = base + at_threads + thread_index() * per_thread;
    if (by_group) {
#pragma omp for schedule(dynamic, 1)
      for (int64_t bg = 0; bg < B * G; ++bg)
        for (int64_t kt = 0; kt < tiles; ++kt) key_tile(bg / G, bg % G, kt, dq, own);
    } else {
#pragma omp for schedule(dynamic, 1)
      for (int64_t item = 0; item < chunks * B * G; ++item) {
        const int64_t chunk = item / (B * G), bg = item % (B * G);
        for (int64_t kt = chunk; kt < tiles; kt += chunks)
          key_tile(bg / G, bg % G, kt, partials + chunk * partial_floats, own);
      }
#pragma omp for schedule(static)
      for (int64_t i = 0; i < partial_floats; ++i) {
        float sum = 0;
        for (int64_t c = 0; c < chunks; ++c) sum += partials[c * partial_floats + i];
        dq[i] = sum;
      }
    }
  }
  finish_dlambda(L, base + at_row_dlambda, dlambda);
}

}  // namespace flash

void attention_backward(const AttentionDims& dims, const float* q, const float* k, const float* v,
                        const float* lambda, const float* out, AttentionSaved saved, const float* dout, float* dq,
                        float* dk, float* dv, float* dlambda) {
  flash::backward(flash::default_path(dims), dims, q, k, v, lambda, out, saved, dout, dq, dk, dv, dlambda);
}

}  // namespace difftx::kernels::DIFFTX_ISA
