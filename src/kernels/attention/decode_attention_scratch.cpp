// The decode attention's scratch planning, compiled once: the per-level kernel
// (decode_attention.cpp) is decode_attention_rows.
#include <algorithm>

#include "core/arena_plan.h"
#include "core/error.h"
#include "core/threading.h"
#include "kernels/attention/decode_attention.h"

namespace difftx::kernels {

DecodeAttentionScratch::DecodeAttentionScratch(const DecodeAttentionDims& a, int64_t max_chunks_, int64_t rows_) {
  a.attention_dims().validate();
  DIFFTX_CHECK(a.capacity >= 1, "decode attention: capacity ", a.capacity, " must be positive");
  DIFFTX_CHECK(max_chunks_ >= 0, "decode attention: max_chunks ", max_chunks_, " must not be negative");
  max_chunks = max_chunks_ > 0 ? max_chunks_ : std::max<int64_t>(1, (2 * thread_count() + a.Hkv - 1) / a.Hkv);
  const int64_t M = a.maps_per_kv_head();
  // A row's items: the kv heads' chunks, rounded to whole lines.
  item_floats = arena_rounded(M * a.value_width() + 2 * M + M * kDecodeScoreBlock);
  q_width = arena_rounded(a.attention_dims().q_width());
  hkv = a.Hkv;
  reserve_rows(std::max<int64_t>(rows_, 1));
}

void DecodeAttentionScratch::reserve_rows(int64_t n) {
  if (n <= rows) return;
  rows = n;
  group_row.resize(rows + 1);
  first_item.resize(rows + 1);
  chunks.resize(rows);
  q_scaled.resize(rows * q_width);
  items.resize(rows * hkv * max_chunks * item_floats);
}

int64_t decode_attention_chunks(const DecodeAttentionScratch& scratch, int64_t length) {
  return std::clamp<int64_t>((length + kDecodeMinChunkKeys - 1) / kDecodeMinChunkKeys, 1, scratch.max_chunks);
}
}  // namespace difftx::kernels
