// Single-query causal attention over a KV cache (a contiguous one, or the engine's paged blocks: infer/kv_pool.h), for every variant of
// docs/SPEC.md §2: the decode step's attention, one new token attending to positions [0, length).
//
//   q       one token's query row after RoPE, [q_width] as the projection lays it out
//   keys    one layer's cached keys (key_region_bytes: elements of dims.storage) in tiles of kKeyTile positions, transposed within a tile:
//           element x of position t of kv head g at key_offset(dims, g, t, x), so that a query
//           scores 16 keys with key_width broadcast FMAs and no horizontal sums
//   values  one layer's cached values, [Hkv][capacity][value_width]
//   lambda  baseline: unused; diff, diff_grouped: the layer's scalar lambda (Eq. 2); diff2: [H] logits of
//           this token (sigmoid applied here, docs/SPEC.md §2.3)
//   out     [out_width], before the V1 headwise norm (applied by the caller, as in prefill)
//
// Each kv head's keys and values are read once for all the query maps that share them (for
// V2 both members of every pair: the same cache traffic as a baseline with the same kv heads).
// Split-KV: a long cache is cut into chunks of keys, each chunk a work item with its own
// running max and sum (online softmax), merged by log-sum-exp; items run on OpenMP threads.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/variant.h"

namespace difftx::kernels {

// How the cache holds keys and values: F32; BF16 (rounded to nearest even when stored, widened
// exactly when read: half the memory and half the bytes each decode step reads); or INT8,
// symmetric with one F32 scale (absmax / 127) per key head row of d elements and per value row
// (a quarter of F32's bytes plus the scales). The layout below is the same for all three.
enum class KvStorage { f32, bf16, int8 };
const char* kv_storage_name(KvStorage storage);  // "f32", "bf16", "int8"
KvStorage parse_kv_storage(const std::string& name);  // error naming the choices
inline int64_t kv_element_bytes(KvStorage storage) {
  return storage == KvStorage::f32 ? 4 : storage == KvStorage::bf16 ? 2 : 1;
}

// The variant (its maps, key and value widths per kv head), the cache's capacity and storage.
struct DecodeAttentionDims : AttentionVariant {
  int64_t capacity;  // row stride of the cache, in tokens
  KvStorage storage = KvStorage::f32;
  // > 0: sliding-window attention, a row of cache length n attends to positions
  // [max(0, n - window), n) only, and never reads the pages before them (which a cache may have
  // given back); 0: to every position.
  int64_t window = 0;

  AttentionDims attention_dims() const { return {kind, 1, 1, H, Hkv, d, r, window}; }
  void validate() const { attention_dims().validate(); }  // the variant's fields and the window
  // The first position a row of cache length n attends to.
  int64_t first_position(int64_t n) const { return window > 0 && n > window ? n - window : 0; }
};

constexpr int64_t kKeyTile = 16;
inline int64_t key_tiles(const DecodeAttentionDims& a) { return (a.capacity + kKeyTile - 1) / kKeyTile; }
// Elements of one layer's keys, [Hkv][key_tiles][key_width][kKeyTile].
inline int64_t key_elements(const DecodeAttentionDims& a) { return a.Hkv * key_tiles(a) * a.key_width() * kKeyTile; }
inline int64_t key_offset(const DecodeAttentionDims& a, int64_t g, int64_t t, int64_t x) {
  return ((g * key_tiles(a) + t / kKeyTile) * a.key_width() + x) * kKeyTile + t % kKeyTile;
}

// The bytes of one layer's keys and of its values: the elements, then (INT8) the scales, F32
// [rows][key_tiles * kKeyTile] so that a tile's 16 scales are contiguous; key rows are the
// layer's Hkv * key_heads_per_kv_head key heads, value rows its Hkv kv heads.
int64_t key_region_bytes(const DecodeAttentionDims& a);
int64_t value_region_bytes(const DecodeAttentionDims& a);
const float* key_scales(const DecodeAttentionDims& a, const void* keys);      // INT8 only
const float* value_scales(const DecodeAttentionDims& a, const void* values);  // INT8 only
inline int64_t scale_stride(const DecodeAttentionDims& a) { return key_tiles(a) * kKeyTile; }

// Stores n tokens at positions [pos, pos + n) into one layer's regions, converting to
// a.storage, from token-major rows as the projections produce them: k [n, Hkv * key_width]
// (after RoPE), v [n, Hkv * value_width]. The caller checks that the positions fit.
void store_kv(const DecodeAttentionDims& a, void* keys, void* values, int64_t pos, int64_t n, const float* k,
              const float* v);

// Where one sequence's cached keys and values are: page i holds positions [i P, (i + 1) P) in
// the layout above with capacity P = dims.capacity (a contiguous cache is one page; the engine's
// paged pool, infer/kv_pool.h, gives a page per block).
struct KvPages {
  const void* const* keys;
  const void* const* values;
};

// One query row: its query after RoPE [q_width], the cache it reads (positions [0, length), or
// the last dims.window of them), its
// lambda (variant.h: null for baseline, the layer's scalar for diff, this row's [H] logits for
// diff2) and its output [out_width].
struct DecodeAttentionRow {
  const float* q;
  int64_t length;
  KvPages pages;
  const float* lambda;
  float* out;
};

constexpr int64_t kDecodeScoreBlock = 4 * kKeyTile;  // keys scored at a time (one online-softmax update)
constexpr int64_t kDecodeMinChunkKeys = 256;  // below this, splitting a kv head costs more than it saves

// Scratch planned once per shape: per work item, the partial outputs and statistics of every
// map, and a block of scores. No allocation happens per call with at most `rows` rows.
struct DecodeAttentionScratch {
  // max_chunks: most chunks a kv head's keys are cut into; 0 picks enough for the threads
  // (at least two work items per thread). Tests pass other values to exercise the merge.
  explicit DecodeAttentionScratch(const DecodeAttentionDims& dims, int64_t max_chunks = 0, int64_t rows = 1);
  void reserve_rows(int64_t rows);  // room for a batch of this many rows (allocates when it grows)
  int64_t max_chunks;
  int64_t item_floats;
  int64_t q_width;  // floats of a row's q_scaled (q_width rounded to whole lines)
  int64_t hkv;
  int64_t rows = 0;
  Buffer<float> q_scaled;  // [rows][q_width], q / sqrt(d)
  Buffer<float> items;     // [rows][Hkv * max_chunks][item_floats]
  // Rows are attended in groups: consecutive rows reading the same pages from the same first
  // position, each in one chunk (a sequence's verification rows), share each key and value tile
  // while it is in cache; any other row is a group of its own.
  std::vector<int64_t> group_row;   // [groups + 1]: each group's first row
  std::vector<int64_t> first_item;  // [groups + 1]: each group's first work item
  std::vector<int64_t> chunks;      // [rows]: each row's chunks
};

// Chunks the keys of one kv head are cut into for a cache of `length` positions: a function of
// the length and the scratch's max_chunks only, so a row's result never depends on the other rows.
int64_t decode_attention_chunks(const DecodeAttentionScratch& scratch, int64_t length);

// Every row's attention, work items of all rows on the OpenMP threads at once; each row's
// output is bit-identical to that row attended alone (a CPU level's kernel).
namespace DIFFTX_ISA {
void decode_attention_rows(const DecodeAttentionDims& dims, std::span<const DecodeAttentionRow> rows,
                           DecodeAttentionScratch& scratch);
}  // namespace DIFFTX_ISA
}  // namespace difftx::kernels
