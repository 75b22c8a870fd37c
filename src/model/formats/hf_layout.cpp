#include "model/formats/hf_layout.h"

#include <cstring>

#include "core/error.h"

namespace difftx::model {
namespace {

// Appends the d rows of head `head` of a projection.
void append_head(RowMap& map, int64_t head, int64_t d) {
  for (int64_t r = 0; r < d; ++r) map.push_back(head * d + r);
}

// The largest group size r dividing `heads` such that consecutive blocks of r difftx heads share
// one kv pair (a, b); r = 1 always qualifies.
int64_t kv_group_size(int64_t heads, int64_t n_rep) {
  auto pair_of = [&](int64_t i) { return std::pair(i / n_rep, (i + heads) / n_rep); };
  for (int64_t r = heads; r > 1; --r) {
    if (heads % r != 0) continue;
    bool shared = true;
    for (int64_t i = 0; i < heads && shared; ++i) shared = pair_of(i) == pair_of(i - i % r);
    if (shared) return r;
  }
  return 1;
}

}  // namespace

DiffLlamaImport diffllama_import_layout(int64_t hf_heads, int64_t hf_kv_heads, int64_t d) {
  DIFFTX_CHECK(hf_heads > 0 && hf_heads % 2 == 0, "diffllama: num_attention_heads must be even (both maps of ",
               "every differential head), got ", hf_heads);
  DIFFTX_CHECK(hf_kv_heads > 0 && hf_heads % hf_kv_heads == 0, "diffllama: num_key_value_heads (", hf_kv_heads,
               ") must divide num_attention_heads (", hf_heads, ")");
  const int64_t H = hf_heads / 2, n_rep = hf_heads / hf_kv_heads;
  const int64_t group = kv_group_size(H, n_rep);
  DiffLlamaImport out;
  out.heads = H;
  out.kv_heads = H / group;
  for (int64_t i = 0; i < H; ++i) {
    append_head(out.q, i, d);      // q1: the first map
    append_head(out.q, i + H, d);  // q2: the second map
  }
  for (int64_t g = 0; g < out.kv_heads; ++g) {
    const int64_t first = g * group;
    for (RowMap* m : {&out.k, &out.v}) {
      append_head(*m, first / n_rep, d);
      append_head(*m, (first + H) / n_rep, d);
    }
  }
  return out;
}

DiffLlamaExport diffllama_export_layout(int64_t H, int64_t Hkv, int64_t d) {
  DIFFTX_CHECK(H > 0 && Hkv > 0 && H % Hkv == 0, "diff: num_key_value_heads (", Hkv,
               ") must divide num_attention_heads (", H, ")");
  DiffLlamaExport out;
  out.hf_heads = 2 * H;
  out.hf_kv_heads = 2 * Hkv;
  // HF head j < H is q1 of head j (difftx sub-head 2j), head H + j its q2 (sub-head 2j + 1); kv
  // heads likewise: kv head g <- k1 of group g, kv head Hkv + g <- k2 (v: the value's halves).
  for (int64_t half = 0; half < 2; ++half) {
    for (int64_t j = 0; j < H; ++j) append_head(out.q, 2 * j + half, d);
    for (int64_t g = 0; g < Hkv; ++g) {
      append_head(out.k, 2 * g + half, d);
      append_head(out.v, 2 * g + half, d);
    }
  }
  return out;
}

RowMap interleaved_to_half_rows(int64_t rows, int64_t d) {
  DIFFTX_CHECK(d > 0 && d % 2 == 0 && rows % d == 0, "RoPE row permutation: ", rows,
               " rows are not whole heads of even width ", d);
  RowMap map;
  map.reserve(rows);
  for (int64_t head = 0; head < rows / d; ++head) {
    for (int64_t i = 0; i < d / 2; ++i) map.push_back(head * d + 2 * i);
    for (int64_t i = 0; i < d / 2; ++i) map.push_back(head * d + 2 * i + 1);
  }
  return map;
}

RowMap half_to_interleaved_rows(int64_t rows, int64_t d) {
  const RowMap forward = interleaved_to_half_rows(rows, d);
  RowMap map(forward.size());
  for (size_t r = 0; r < forward.size(); ++r) map[forward[r]] = static_cast<int64_t>(r);
  return map;
}

RowMap compose(const RowMap& first, const RowMap& then) {
  RowMap out;
  out.reserve(then.size());
  for (int64_t r : then) {
    DIFFTX_CHECK(r >= 0 && r < static_cast<int64_t>(first.size()), "compose: row ", r, " out of range");
    out.push_back(first[r]);
  }
  return out;
}

void gather_rows(const void* src, int64_t src_rows, const RowMap& map, int64_t row_bytes, void* dst) {
  for (size_t r = 0; r < map.size(); ++r) {
    DIFFTX_CHECK(map[r] >= 0 && map[r] < src_rows, "gather_rows: source row ", map[r], " of ", src_rows);
    std::memcpy(static_cast<unsigned char*>(dst) + r * row_bytes,
                static_cast<const unsigned char*>(src) + map[r] * row_bytes, row_bytes);
  }
}

}  // namespace difftx::model
