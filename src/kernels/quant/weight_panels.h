// Weight panels: a matrix repacked into the layout the GEMMs multiply (the x86 int8 GEMM,
// gemm_int8.h, for Q8_0, Q4_0, Q4_K; the float GEMM of every level that has one, gemm_float.h,
// for BF16, F16), so that a product reads it as it is instead of
// repacking the weights on every call. The engine builds them once per model
// (the CPU backend's prepare_matrix, for the types whose GEMM at the level reads them:
// CpuKernels::reads_panels); without them the GEMMs repack per call into a layout holding the same
// values, so their bits do not depend on where the panels came from.
//
// A panel is 16 consecutive weight rows (rows past the matrix's end are zero), panels one after
// another.
//   BF16, F16:  the panel's weights as stored, column by column: 2-byte value 16 k + r is weight
//               k of row r.
// The block types' columns go in 32-blocks, and each (panel, block) is one record, in block
// order within a panel:
//   Q4_0, Q4_K: 256 bytes of nibbles, byte 64 v + 4 r + t (v, t < 4; r < 16 the panel's row)
//               holding weight 4 v + t of the block in its low nibble and weight 16 + 4 v + t in
//               its high one (q in [0, 15]: for Q4_0 the 16 bytes of row r are its own qs
//               reordered four at a time); then Q4_0: 16 F16 scales d; Q4_K: 16 F32 scales
//               d * s_j and 16 F32 minimums dmin * m_j of the block's sub-block j.
//   Q8_0:       512 bytes, byte 64 k + 4 r + t holding weight 4 k + t (k < 8) as a signed byte;
//               then 16 F16 scales d.
// So a 64-byte vector holds 4 weights of each of the 16 rows, all multiplying the same 4 bytes of
// x. Same bytes as the matrix, but for Q4_K (0.75 bytes per weight against 0.5625).
// docs/FORMATS.md "Weight panels".
#pragma once
#include <cstdint>

#include "kernels/quant/matmul.h"

namespace difftx::kernels::quant {

constexpr int kPanelHeight = 16;  // weight rows per panel
constexpr int64_t kPanelBlock = 32;  // columns per record

// Panels of a matrix of `rows` rows (rows rounded up to 16).
constexpr int64_t panel_count(int64_t rows) { return (rows + kPanelHeight - 1) / kPanelHeight; }

// Offset of the scales within a record (the weights' bytes before them); 0 for the types
// without panels.
constexpr int64_t panel_weight_bytes(WeightType type) {
  return type == WeightType::q4_0 || type == WeightType::q4_k ? kPanelHeight * kPanelBlock / 2
         : type == WeightType::q8_0                           ? kPanelHeight * kPanelBlock
                                                              : 0;
}
// Bytes of one record of `type` (the weights, then F16 scales or F32 scales and minimums); 0
// for the types without panels.
constexpr int64_t panel_record_bytes(WeightType type) {
  return type == WeightType::q4_k ? panel_weight_bytes(type) + 8 * kPanelHeight
         : panel_weight_bytes(type) ? panel_weight_bytes(type) + 2 * kPanelHeight
                                    : 0;
}
// Whether `type` has a panel layout (the block types, BF16, F16).
bool has_panels(WeightType type);
// Bytes of one panel of a matrix of `cols` columns (checked: the type has panels, cols fits).
int64_t panel_bytes(WeightType type, int64_t cols);
// Bytes of the panels of a rows x cols matrix (whole panels: rows rounded up to 16).
int64_t weight_panels_bytes(WeightType type, int64_t rows, int64_t cols);

// Whether a row's stored bytes can be read back from the panels: every type but Q4_K, whose
// records hold its scales multiplied out.
bool panels_keep_rows(WeightType type);
// Row r of W as stored (weight_row_bytes(W.type, W.cols) bytes), read back from W.panels.
void panel_row_bytes(const WeightMatrix& W, int64_t r, uint8_t* out);

// Panels [first, first + count) of W into out (count * panel_bytes(W.type, W.cols) bytes).
void pack_panels(const WeightMatrix& W, int64_t first, int64_t count, uint8_t* out);

}  // namespace difftx::kernels::quant
