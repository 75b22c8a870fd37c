// The fused single-query attention of decode_attention.h. Map m of kv head g reads the query
// columns [(g M + m) d, +d) for every variant (M maps per kv head): baseline heads, diff
// [q1 | q2] sub-heads and diff2 query heads are all laid out consecutively in the q row. For
// diff, odd maps (q2) score against the second half of the key row (k2).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/arena_plan.h"
#include "core/error.h"
#include "core/threading.h"
#include "io/float16.h"
#include "kernels/attention/decode_attention.h"
#include "kernels/vector_math.h"
#include "kernels/isa.h"

#ifdef __AVX2__
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace difftx::kernels::DIFFTX_ISA {
namespace {

// The cache's elements widened to F32: F32 as it is, BF16 (stored as uint16_t) by a shift, INT8
// to its integer value (the row's scale is applied to the scores and the probabilities).
inline float widen(float x) { return x; }
inline float widen(uint16_t x) { return io::bf16_to_float(x); }
inline float widen(int8_t x) { return x; }
#ifdef __AVX512F__
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const uint16_t* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}
inline __m512 load16(const int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
#elif defined(__AVX2__) && defined(__FMA__)
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
}
inline __m256 load8(const int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
#elif defined(__ARM_NEON)
// 16 elements widened to F32 as four 4-lane vectors.
inline void load16(const float* p, float32x4_t (&v)[4]) {
  for (int k = 0; k < 4; ++k) v[k] = vld1q_f32(p + 4 * k);
}
inline void load16(const uint16_t* p, float32x4_t (&v)[4]) {
  for (int k = 0; k < 4; ++k) v[k] = vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p + 4 * k), 16));
}
inline void load16(const int8_t* p, float32x4_t (&v)[4]) {
  const int8x16_t b = vld1q_s8(p);
  const int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_high_s8(b);
  v[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
  v[1] = vcvtq_f32_s32(vmovl_high_s16(lo));
  v[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
  v[3] = vcvtq_f32_s32(vmovl_high_s16(hi));
}
// acc[k] += s * v[k] for the four vectors of 16 elements.
template <typename T>
inline void fma16(float32x4_t (&acc)[4], float s, const T* p) {
  float32x4_t v[4];
  load16(p, v);
  for (int k = 0; k < 4; ++k) acc[k] = vfmaq_n_f32(acc[k], v[k], s);
}
#endif

// scores[lane] = q . key(t0 + lane) over one tile of kKeyTile keys: `width` broadcast FMAs
// down the tile's columns (tile row x holds column x of the 16 keys), four partial sums.
template <typename T>
inline void score_tile(const float* q, const T* tile, int64_t width, float* scores) {
#ifdef __AVX512F__
  static_assert(kKeyTile == 16);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t x = 0;
  for (; x + 4 <= width; x += 4)
    for (int u = 0; u < 4; ++u)
      acc[u] = _mm512_fmadd_ps(_mm512_set1_ps(q[x + u]), load16(tile + (x + u) * kKeyTile), acc[u]);
  for (; x < width; ++x) acc[0] = _mm512_fmadd_ps(_mm512_set1_ps(q[x]), load16(tile + x * kKeyTile), acc[0]);
  _mm512_storeu_ps(scores, _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
#elif defined(__AVX2__) && defined(__FMA__)
  static_assert(kKeyTile == 16);  // two vectors per tile row: acc[u][0] keys 0-7, acc[u][1] keys 8-15
  __m256 acc[4][2];
  for (auto& a : acc) a[0] = a[1] = _mm256_setzero_ps();
  int64_t x = 0;
  for (; x + 4 <= width; x += 4)
    for (int u = 0; u < 4; ++u) {
      const __m256 qx = _mm256_broadcast_ss(q + x + u);
      acc[u][0] = _mm256_fmadd_ps(qx, load8(tile + (x + u) * kKeyTile), acc[u][0]);
      acc[u][1] = _mm256_fmadd_ps(qx, load8(tile + (x + u) * kKeyTile + 8), acc[u][1]);
    }
  for (; x < width; ++x) {
    const __m256 qx = _mm256_broadcast_ss(q + x);
    acc[0][0] = _mm256_fmadd_ps(qx, load8(tile + x * kKeyTile), acc[0][0]);
    acc[0][1] = _mm256_fmadd_ps(qx, load8(tile + x * kKeyTile + 8), acc[0][1]);
  }
  for (int h = 0; h < 2; ++h)
    _mm256_storeu_ps(scores + 8 * h, _mm256_add_ps(_mm256_add_ps(acc[0][h], acc[1][h]), _mm256_add_ps(acc[2][h], acc[3][h])));
#elif defined(__ARM_NEON)
  static_assert(kKeyTile == 16);
  float32x4_t acc[4][4];  // [partial sum][4 lanes of the tile's 16]
  for (auto& a : acc)
    for (auto& v : a) v = vdupq_n_f32(0.0f);
  int64_t x = 0;
  for (; x + 4 <= width; x += 4)
    for (int u = 0; u < 4; ++u) fma16(acc[u], q[x + u], tile + (x + u) * kKeyTile);
  for (; x < width; ++x) fma16(acc[0], q[x], tile + x * kKeyTile);
  for (int k = 0; k < 4; ++k)
    vst1q_f32(scores + 4 * k, vaddq_f32(vaddq_f32(acc[0][k], acc[1][k]), vaddq_f32(acc[2][k], acc[3][k])));
#else
  float s[kKeyTile] = {};
  for (int64_t x = 0; x < width; ++x)
#pragma omp simd
    for (int64_t lane = 0; lane < kKeyTile; ++lane) s[lane] += q[x] * widen(tile[x * kKeyTile + lane]);
  for (int64_t lane = 0; lane < kKeyTile; ++lane) scores[lane] = s[lane];
#endif
}

// acc[vw] += sum over j < nb of p[j] v[j], v row-major [nb][vw]. With AVX-512, AVX2 or NEON,
// each 16- (8-, 16-) wide strip of acc stays in registers across the keys (four independent FMA
// chains), instead of a load-FMA-store round trip per key.
template <typename T>
inline void accumulate_values(const float* p, const T* v, int64_t nb, int64_t vw, float* acc) {
#ifdef __AVX512F__
  if (vw % 16 == 0) {
    for (int64_t x0 = 0; x0 < vw; x0 += 16) {
      __m512 a0 = _mm512_loadu_ps(acc + x0), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
             a3 = _mm512_setzero_ps();
      int64_t j = 0;
      for (; j + 4 <= nb; j += 4) {
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(p[j]), load16(v + j * vw + x0), a0);
        a1 = _mm512_fmadd_ps(_mm512_set1_ps(p[j + 1]), load16(v + (j + 1) * vw + x0), a1);
        a2 = _mm512_fmadd_ps(_mm512_set1_ps(p[j + 2]), load16(v + (j + 2) * vw + x0), a2);
        a3 = _mm512_fmadd_ps(_mm512_set1_ps(p[j + 3]), load16(v + (j + 3) * vw + x0), a3);
      }
      for (; j < nb; ++j) a0 = _mm512_fmadd_ps(_mm512_set1_ps(p[j]), load16(v + j * vw + x0), a0);
      _mm512_storeu_ps(acc + x0, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    return;
  }
#elif defined(__AVX2__) && defined(__FMA__)
  if (vw % 8 == 0) {
    for (int64_t x0 = 0; x0 < vw; x0 += 8) {
      __m256 a0 = _mm256_loadu_ps(acc + x0), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
             a3 = _mm256_setzero_ps();
      int64_t j = 0;
      for (; j + 4 <= nb; j += 4) {
        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j), load8(v + j * vw + x0), a0);
        a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j + 1), load8(v + (j + 1) * vw + x0), a1);
        a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j + 2), load8(v + (j + 2) * vw + x0), a2);
        a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j + 3), load8(v + (j + 3) * vw + x0), a3);
      }
      for (; j < nb; ++j) a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j), load8(v + j * vw + x0), a0);
      _mm256_storeu_ps(acc + x0, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    }
    return;
  }
#elif defined(__ARM_NEON)
  if (vw % 16 == 0) {
    for (int64_t x0 = 0; x0 < vw; x0 += 16) {
      float32x4_t a[4][4];  // [chain][4 lanes of the strip's 16]; chain 0 starts from acc
      for (int k = 0; k < 4; ++k) {
        a[0][k] = vld1q_f32(acc + x0 + 4 * k);
        a[1][k] = a[2][k] = a[3][k] = vdupq_n_f32(0.0f);
      }
      int64_t j = 0;
      for (; j + 4 <= nb; j += 4)
        for (int u = 0; u < 4; ++u) fma16(a[u], p[j + u], v + (j + u) * vw + x0);
      for (; j < nb; ++j) fma16(a[0], p[j], v + j * vw + x0);
      for (int k = 0; k < 4; ++k)
        vst1q_f32(acc + x0 + 4 * k, vaddq_f32(vaddq_f32(a[0][k], a[1][k]), vaddq_f32(a[2][k], a[3][k])));
    }
    return;
  }
#endif
  for (int64_t j = 0; j < nb; ++j)
#pragma omp simd
    for (int64_t x = 0; x < vw; ++x) acc[x] += p[j] * widen(v[j * vw + x]);
}

// s[j] = e^(s[j] - max) for j < n; returns their sum.
inline float exp_and_sum(float* s, int64_t n, float max) {
  float sum = 0;
#ifdef __ARM_NEON
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float32x4_t e = exp_neon(vsubq_f32(vld1q_f32(s + j), vdupq_n_f32(max)));
    vst1q_f32(s + j, e);
    acc = vaddq_f32(acc, e);
  }
  sum = vaddvq_f32(acc);
  for (; j < n; ++j) sum += (s[j] = exp_approx(s[j] - max));
#else
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) sum += (s[j] = exp_approx(s[j] - max));
#endif
  return sum;
}

// Asks for [p, p + bytes) to be brought into cache. A kv head's keys (or values) in one page are a
// few KiB, and the next page's are elsewhere: the hardware prefetchers, which stop at 4 KiB pages,
// do not find them, so each page would start with a wait on memory.
inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b);
}

// One work item's view of its scratch: unnormalised outputs, running max and sum per map.
struct ItemState {
  float* acc;     // [M][vw]
  float* mx;      // [M]
  float* sum;     // [M]
  float* scores;  // [M][kDecodeScoreBlock]
};
ItemState item_state(float* base, int64_t M, int64_t vw) {
  return {base, base + M * vw, base + M * vw + M, base + M * vw + 2 * M};
}

constexpr int64_t kMaxGroupRows = 16;  // rows of one group at most (a verification's K + 1)

// One row's part of a work item: its scaled query, the end of its keys, its window's first
// position and its scratch.
struct RowTask {
  const float* q_scaled;
  int64_t end, first;
  ItemState st;
};

// One block of task's row: the nb keys and values of kv head g from position t0 (at within its
// page), scored for all M maps sharing the head and folded into the row's online softmax. Keys
// before the task's `first` (a sliding window's start) score -inf. T: the cache's element type;
// for INT8 a key's scale (decode_attention.h) multiplies its scores and a value's its probability
// (after the sum), so the inner loops stay those of the other types.
template <typename T>
void attend_block(const DecodeAttentionDims& a, int64_t g, KvPages pages, int64_t page, int64_t t0, int64_t nb,
                  const RowTask& task) {
  constexpr bool scaled = std::is_same_v<T, int8_t>;
  const int64_t M = a.maps_per_kv_head(), d = a.d, vw = a.value_width(), P = a.capacity, at = t0 % P;
  const T* keys = static_cast<const T*>(pages.keys[page]);
  const T* V = static_cast<const T*>(pages.values[page]) + g * P * vw;
  const ItemState& st = task.st;
  const float* qg = task.q_scaled + g * M * d;
  for (int64_t j = 0; j < nb; j += kKeyTile) {
    const T* tile = keys + key_offset(a, g, at + j, 0);
    for (int64_t m = 0; m < M; ++m) {  // the map's key within its kv head's row (diff: q2 reads k2)
      const int64_t key = a.key_head(g * M + m) - g * a.key_heads_per_kv_head();
      float* scores = st.scores + m * kDecodeScoreBlock + j;
      score_tile(qg + m * d, tile + key * d * kKeyTile, d, scores);
      if constexpr (scaled) {
        const float* ks = key_scales(a, pages.keys[page]) + a.key_head(g * M + m) * scale_stride(a) + at + j;
#pragma omp simd
        for (int64_t lane = 0; lane < kKeyTile; ++lane) scores[lane] *= ks[lane];
      }
    }
  }
  // The window starts inside this block: the `hidden` positions before it score -inf (their
  // probability is 0), and their values are not read at all.
  const int64_t hidden = std::max<int64_t>(0, task.first - t0);
  for (int64_t m = 0; m < M && hidden > 0; ++m)
    std::fill_n(st.scores + m * kDecodeScoreBlock, hidden, -std::numeric_limits<float>::infinity());
  for (int64_t m = 0; m < M; ++m) {
    float* s = st.scores + m * kDecodeScoreBlock;
    float block_max = s[0];
    for (int64_t j = 1; j < nb; ++j) block_max = std::max(block_max, s[j]);
    const float new_max = std::max(st.mx[m], block_max);
    const float correction = exp_approx(st.mx[m] - new_max);  // 0 on the first block (mx = -inf)
    st.mx[m] = new_max;
    const float block_sum = exp_and_sum(s, nb, new_max);
    st.sum[m] = st.sum[m] * correction + block_sum;
    if (correction != 1.0f) {
      float* acc = st.acc + m * vw;
#pragma omp simd
      for (int64_t x = 0; x < vw; ++x) acc[x] *= correction;
    }
  }
  if constexpr (scaled) {
    const float* vs = value_scales(a, pages.values[page]) + g * scale_stride(a) + at;
    for (int64_t m = 0; m < M; ++m) {
      float* p = st.scores + m * kDecodeScoreBlock;
#pragma omp simd
      for (int64_t j = 0; j < nb; ++j) p[j] *= vs[j];
    }
  }
  for (int64_t m = 0; m < M; ++m)
    accumulate_values(st.scores + m * kDecodeScoreBlock + hidden, V + (at + hidden) * vw, nb - hidden, vw,
                      st.acc + m * vw);
}

// Online softmax over keys [begin, task.end) of kv head g, for each task's row; begin is a
// multiple of kKeyTile. Keys are taken kDecodeScoreBlock at a time, never across a page's end,
// and each block goes through every row while its keys and values are in cache; each row's
// arithmetic is what it would be alone.
template <typename T>
void attend_chunk(const DecodeAttentionDims& a, int64_t g, int64_t begin, KvPages pages, std::span<RowTask> tasks) {
  const int64_t M = a.maps_per_kv_head(), vw = a.value_width(), P = a.capacity;
  int64_t end = begin;
  for (RowTask& task : tasks) {
    std::fill(task.st.acc, task.st.acc + M * vw, 0.0f);
    std::fill(task.st.mx, task.st.mx + M, -std::numeric_limits<float>::infinity());
    std::fill(task.st.sum, task.st.sum + M, 0.0f);
    end = std::max(end, task.end);
  }
  int64_t step = 0;
  for (int64_t t0 = begin; t0 < end; t0 += step) {
    const int64_t page = t0 / P;
    step = std::min(kDecodeScoreBlock, P - t0 % P);
    if (const int64_t t1 = t0 + step; t1 < end) {  // the next block's keys and values, while this one is scored
      const int64_t page1 = t1 / P, at1 = t1 % P, nb1 = std::min({kDecodeScoreBlock, end - t1, P - at1});
      const int64_t tiles1 = (nb1 + kKeyTile - 1) / kKeyTile;
      prefetch_bytes(static_cast<const T*>(pages.keys[page1]) + key_offset(a, g, at1, 0),
                     tiles1 * a.key_width() * kKeyTile * int64_t{sizeof(T)});
      prefetch_bytes(static_cast<const T*>(pages.values[page1]) + (g * P + at1) * vw, nb1 * vw * int64_t{sizeof(T)});
    }
    for (const RowTask& task : tasks) {
      if (t0 >= task.end) continue;
      const int64_t nb = std::min(step, task.end - t0);
      if (t0 + nb <= task.first) continue;  // a page's end before the window (its pages may be gone)
      attend_block<T>(a, g, pages, page, t0, nb, task);
    }
  }
}

// Merges the chunks of kv head g by log-sum-exp into normalised per-map outputs (written over
// chunk 0's accumulators), then forms the variant's output heads.
void merge_and_combine(const DecodeAttentionDims& a, int64_t g, int64_t chunks, const float* lambda,
                       const DecodeAttentionScratch& scratch, float* row_items, float* out) {
  const int64_t M = a.maps_per_kv_head(), vw = a.value_width();
  float* first = row_items + g * scratch.max_chunks * scratch.item_floats;
  const ItemState s0 = item_state(first, M, vw);
  for (int64_t m = 0; m < M; ++m) {
    float global_max = s0.mx[m];
    for (int64_t c = 1; c < chunks; ++c)
      global_max = std::max(global_max, item_state(first + c * scratch.item_floats, M, vw).mx[m]);
    float* acc = s0.acc + m * vw;
    float total = s0.sum[m] * exp_approx(s0.mx[m] - global_max);
    const float w0 = exp_approx(s0.mx[m] - global_max);
#pragma omp simd
    for (int64_t x = 0; x < vw; ++x) acc[x] *= w0;
    for (int64_t c = 1; c < chunks; ++c) {
      const ItemState sc = item_state(first + c * scratch.item_floats, M, vw);
      const float w = exp_approx(sc.mx[m] - global_max);
      total += sc.sum[m] * w;
      const float* other = sc.acc + m * vw;
#pragma omp simd
      for (int64_t x = 0; x < vw; ++x) acc[x] += w * other[x];
    }
    const float inv = 1.0f / total;
#pragma omp simd
    for (int64_t x = 0; x < vw; ++x) acc[x] *= inv;
  }
  if (!a.paired()) {
    std::copy(s0.acc, s0.acc + M * vw, out + g * M * vw);
    return;
  }
  // Output head i = its signal map - w its noise map, with the variant's pair weight w (variant.h).
  // A head's maps never straddle kv heads: kv head g serves heads [g H / Hkv, (g + 1) H / Hkv).
  const int64_t heads = a.H / a.Hkv;
  for (int64_t head = g * heads; head < (g + 1) * heads; ++head) {
    const float c = a.pair_weight<float>(lambda, 0, head);
    const float* o1 = s0.acc + (a.signal_map(head) - g * M) * vw;
    const float* o2 = s0.acc + (a.noise_map(head) - g * M) * vw;
    float* dst = out + head * vw;
#pragma omp simd
    for (int64_t x = 0; x < vw; ++x) dst[x] = o1[x] - c * o2[x];
  }
}

}  // namespace

void decode_attention_rows(const DecodeAttentionDims& a, std::span<const DecodeAttentionRow> rows,
                           DecodeAttentionScratch& scratch) {
  const int64_t R = static_cast<int64_t>(rows.size());
  DIFFTX_CHECK(scratch.q_width == arena_rounded(a.attention_dims().q_width()) && scratch.hkv == a.Hkv,
               "decode attention: the scratch was planned for other dims");
  scratch.reserve_rows(R);
  const int64_t qw = a.attention_dims().q_width(), vw = a.value_width(), M = a.maps_per_kv_head();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.d)));
  // Row r's keys start at this whole tile (a sliding window's first position rounded down).
  auto start_of = [&](int64_t r) { return a.first_position(rows[r].length) / kKeyTile * kKeyTile; };
  int64_t work = 0;
  for (int64_t r = 0; r < R; ++r) {
    const DecodeAttentionRow& row = rows[r];
    DIFFTX_CHECK(row.length >= 1, "decode attention: cache length ", row.length, " must be positive");
    DIFFTX_CHECK(row.q && row.pages.keys && row.pages.values && row.out,
                 "decode attention: q, keys, values and out must not be null");
    DIFFTX_CHECK(!a.paired() || row.lambda, "decode attention (", attention_kind_name(a.kind),
                 "): lambda must not be null");
    float* qs = scratch.q_scaled.data() + r * scratch.q_width;
    for (int64_t i = 0; i < qw; ++i) qs[i] = row.q[i] * scale;
    const int64_t span = row.length - start_of(r);  // whole tiles
    scratch.chunks[r] = decode_attention_chunks(scratch, span);
    work += span * a.Hkv * (a.key_width() + vw);
  }
  // The groups (DecodeAttentionScratch) and their work items, Hkv * chunks each (a group of more
  // than one row has one chunk).
  auto joins = [&](int64_t r, int64_t first_row) {
    return r - first_row < kMaxGroupRows && scratch.chunks[r] == 1 && scratch.chunks[r - 1] == 1 &&
           rows[r].pages.keys == rows[r - 1].pages.keys && rows[r].pages.values == rows[r - 1].pages.values &&
           start_of(r) == start_of(r - 1);
  };
  std::vector<int64_t>& group_row = scratch.group_row;
  std::vector<int64_t>& first_item = scratch.first_item;
  int64_t groups = 0;
  first_item[0] = 0;
  for (int64_t r = 0; r < R; ++r) {
    if (r > 0 && joins(r, group_row[groups - 1])) continue;
    group_row[groups++] = r;
  }
  group_row[groups] = R;
  for (int64_t gi = 0; gi < groups; ++gi) first_item[gi + 1] = first_item[gi] + a.Hkv * scratch.chunks[group_row[gi]];
  const int64_t items = first_item[groups];
  const int64_t row_floats = a.Hkv * scratch.max_chunks * scratch.item_floats;
  const bool parallel = items > 1 && work >= (int64_t{1} << 15);
#pragma omp parallel if (parallel)
  {
    std::array<RowTask, kMaxGroupRows> tasks;
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t gi =
          std::upper_bound(first_item.begin(), first_item.begin() + groups + 1, item) - first_item.begin() - 1;
      const int64_t r0 = group_row[gi], n = group_row[gi + 1] - r0;
      const int64_t chunks = (first_item[gi + 1] - first_item[gi]) / a.Hkv;
      const int64_t g = (item - first_item[gi]) / chunks, c = (item - first_item[gi]) % chunks;
      // A group of rows has one chunk each (c = 0): they all begin at the same start.
      const int64_t start = start_of(r0);
      auto tiles = [&](int64_t r) { return (rows[r].length - start + kKeyTile - 1) / kKeyTile; };  // whole tiles
      const int64_t begin = start + c * tiles(r0) / chunks * kKeyTile;
      for (int64_t i = 0; i < n; ++i) {
        const DecodeAttentionRow& row = rows[r0 + i];
        const int64_t end = std::min(row.length, start + (c + 1) * tiles(r0 + i) / chunks * kKeyTile);
        float* base = scratch.items.data() + (r0 + i) * row_floats + (g * scratch.max_chunks + c) * scratch.item_floats;
        tasks[i] = {scratch.q_scaled.data() + (r0 + i) * scratch.q_width, end, a.first_position(row.length),
                    item_state(base, M, vw)};
      }
      const std::span<RowTask> group(tasks.data(), n);
      switch (a.storage) {
        case KvStorage::f32: attend_chunk<float>(a, g, begin, rows[r0].pages, group); break;
        case KvStorage::bf16: attend_chunk<uint16_t>(a, g, begin, rows[r0].pages, group); break;
        case KvStorage::int8: attend_chunk<int8_t>(a, g, begin, rows[r0].pages, group); break;
      }
    }
#pragma omp for schedule(static)
    for (int64_t rg = 0; rg < R * a.Hkv; ++rg) {
      const int64_t r = rg / a.Hkv, g = rg % a.Hkv;
      const DecodeAttentionRow& row = rows[r];
      merge_and_combine(a, g, scratch.chunks[r], row.lambda, scratch, scratch.items.data() + r * row_floats, row.out);
    }
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA
