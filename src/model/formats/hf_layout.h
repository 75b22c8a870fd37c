// Where each row of difftx's attention projections comes from in a Hugging Face layout, and
// back (docs/FORMATS.md "DiffLlama onto DIFF V1"). All maps are row maps: destination row r is
// source row map[r]; columns never move, except that export folds the DIFF V1 head-norm gain
// into o_proj's columns (hf_format.cpp).
//
// DiffLlama (H query heads of width d counting both maps, Hkv kv heads, rotate-half RoPE): query
// head i (i < H/2) is the first map of differential head i and query head i + H/2 its second; both
// attend with the values of kv heads a = i / n and b = (i + H/2) / n concatenated (n = H / Hkv).
// In difftx's DIFF V1 (docs/MODEL.md §2.2), head i's q rows are [q1 | q2] and kv group g's k rows
// [k1 | k2] and v rows one 2d value: so q1 = HF head i, q2 = HF head i + H/2, and a difftx kv
// group gathers the heads that share one pair (a, b), with k = [k_a | k_b] and v = [v_a | v_b].
// With Hkv even that is Hkv / 2 groups and nothing is copied; otherwise rows are duplicated so
// that every group holds its own pair: exact, never approximated.
//
// Export inverts an import: for DIFF V1's H heads over Hkv groups, every HF kv-head count K whose
// import gives those groups is a form of the model. K = 2 Hkv copies nothing and always fits; a
// smaller K (the odd counts above) ties the difftx rows it duplicated to one HF row, and fits
// only where those rows are equal, as they are in a model read from such a checkpoint.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace difftx::model {

using RowMap = std::vector<int64_t>;

struct DiffLlamaImport {
  int64_t heads = 0, kv_heads = 0;  // difftx's H and Hkv for DIFF V1
  RowMap q, k, v;                   // difftx row <- HF row
};
// hf_heads even, hf_kv_heads dividing it.
DiffLlamaImport diffllama_import_layout(int64_t hf_heads, int64_t hf_kv_heads, int64_t head_dim);

// The kv groups DiffLlama's import makes of hf_heads (even) over hf_kv_heads (dividing it).
int64_t diffllama_kv_groups(int64_t hf_heads, int64_t hf_kv_heads);

// The HF kv-head counts whose import makes `heads` DIFF V1 heads over `kv_heads` groups, fewest
// first; 2 kv_heads is always among them.
std::vector<int64_t> diffllama_hf_kv_head_counts(int64_t heads, int64_t kv_heads);

struct DiffLlamaExport {
  int64_t hf_heads = 0, hf_kv_heads = 0;
  RowMap q, k, v;     // HF row <- difftx row (k, v: the first difftx row the import fills from it)
  RowMap kv_source;   // difftx k / v row -> the HF row the import fills it from
};
// The inverse of diffllama_import_layout(2 heads, hf_kv_heads, head_dim), which must make
// kv_heads groups (hf_kv_heads from diffllama_hf_kv_head_counts).
DiffLlamaExport diffllama_export_layout(int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t hf_kv_heads);

// Whether the rows of `m` (rows of `cols` floats) that `source` maps to one row are the same bits,
// so that writing one of them loses nothing.
bool tied_rows_agree(std::span<const float> m, int64_t cols, const RowMap& source);

// Rotate-half RoPE rows from interleaved ones within every head of width d: row i of a head
// (i < d/2) <- its row 2i, row d/2 + i <- row 2i + 1. Applied to q and k alike, it leaves every
// q.k product unchanged and turns interleaved pairs into rotate-half pairs of the same frequency.
RowMap interleaved_to_half_rows(int64_t rows, int64_t head_dim);
// The inverse (llama.cpp's GGUF llama layout from Hugging Face's): row 2i <- row i, row 2i + 1 <-
// row d/2 + i.
RowMap half_to_interleaved_rows(int64_t rows, int64_t head_dim);

// Composition: the result's row r is `first`'s row then[r] (apply `then` to the output of `first`).
RowMap compose(const RowMap& first, const RowMap& then);

// dst row r = src row map[r], for a matrix of rows `row_bytes` long in any storage type (rows of a
// block-quantized matrix are independent too).
void gather_rows(const void* src, int64_t src_rows, const RowMap& map, int64_t row_bytes, void* dst);

}  // namespace difftx::model
