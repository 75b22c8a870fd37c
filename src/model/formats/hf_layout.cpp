#include "model/formats/hf_layout.h"

#include <cstring>
#include <vector>

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

void check_diffllama_heads(int64_t hf_heads, int64_t hf_kv_heads) {
  DIFFTX_CHECK(hf_heads > 0 && hf_heads % 2 == 0, "diffllama: num_attention_heads must be even (both maps of ",
               "every differential head), got ", hf_heads);
  DIFFTX_CHECK(hf_kv_heads > 0 && hf_heads % hf_kv_heads == 0, "diffllama: num_key_value_heads (", hf_kv_heads,
               ") must divide num_attention_heads (", hf_heads, ")");
}

// DIFF V1's heads: H over Hkv groups.
void check_diff_heads(int64_t H, int64_t Hkv) {
  DIFFTX_CHECK(H > 0 && Hkv > 0 && H % Hkv == 0, "diff: num_key_value_heads (", Hkv,
               ") must divide num_attention_heads (", H, ")");
}

// dst row r <- the first row of `map` that reads source row r, for a source of `rows` rows that
// the map reads every row of.
RowMap first_readers(const RowMap& map, int64_t rows) {
  RowMap out(rows, -1);
  for (int64_t j = static_cast<int64_t>(map.size()) - 1; j >= 0; --j) {
    DIFFTX_CHECK(map[j] >= 0 && map[j] < rows, "internal: row map reads row ", map[j], " of ", rows);
    out[map[j]] = j;
  }
  for (int64_t r = 0; r < rows; ++r) DIFFTX_CHECK(out[r] >= 0, "internal: row map never reads row ", r);
  return out;
}

}  // namespace

int64_t diffllama_kv_groups(int64_t hf_heads, int64_t hf_kv_heads) {
  check_diffllama_heads(hf_heads, hf_kv_heads);
  const int64_t H = hf_heads / 2;
  return H / kv_group_size(H, hf_heads / hf_kv_heads);
}

DiffLlamaImport diffllama_import_layout(int64_t hf_heads, int64_t hf_kv_heads, int64_t d) {
  const int64_t groups = diffllama_kv_groups(hf_heads, hf_kv_heads);
  const int64_t H = hf_heads / 2, n_rep = hf_heads / hf_kv_heads, group = H / groups;
  DiffLlamaImport out;
  out.heads = H;
  out.kv_heads = groups;
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

std::vector<int64_t> diffllama_hf_kv_head_counts(int64_t H, int64_t Hkv) {
  check_diff_heads(H, Hkv);
  std::vector<int64_t> counts;
  for (int64_t k = 1; k <= 2 * H; ++k)
    if ((2 * H) % k == 0 && diffllama_kv_groups(2 * H, k) == Hkv) counts.push_back(k);
  return counts;
}

DiffLlamaExport diffllama_export_layout(int64_t H, int64_t Hkv, int64_t d, int64_t hf_kv_heads) {
  check_diff_heads(H, Hkv);
  const DiffLlamaImport in = diffllama_import_layout(2 * H, hf_kv_heads, d);
  DIFFTX_CHECK(in.kv_heads == Hkv, "diffllama: ", hf_kv_heads, " kv heads make ", in.kv_heads, " kv groups of ", H,
               " differential heads, not ", Hkv);
  DiffLlamaExport out;
  out.hf_heads = 2 * H;
  out.hf_kv_heads = hf_kv_heads;
  out.q = first_readers(in.q, 2 * H * d);
  out.k = first_readers(in.k, hf_kv_heads * d);
  out.v = first_readers(in.v, hf_kv_heads * d);
  out.kv_source = in.k;
  return out;
}

bool tied_rows_agree(std::span<const float> m, int64_t cols, const RowMap& source) {
  DIFFTX_CHECK(cols > 0 && m.size() == source.size() * static_cast<size_t>(cols), "tied_rows_agree: ", m.size(),
               " floats are not ", source.size(), " rows of ", cols);
  // source row -> the first row read from it (no more source rows than rows read from them)
  std::vector<int64_t> first(source.size(), -1);
  for (size_t j = 0; j < source.size(); ++j) {
    DIFFTX_CHECK(source[j] >= 0 && static_cast<size_t>(source[j]) < source.size(), "tied_rows_agree: row ", j,
                 " has source ", source[j]);
    int64_t& f = first[source[j]];
    if (f < 0) f = static_cast<int64_t>(j);
    else if (std::memcmp(&m[j * cols], &m[f * cols], cols * sizeof(float)) != 0) return false;
  }
  return true;
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
