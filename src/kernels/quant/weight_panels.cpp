#include "kernels/quant/weight_panels.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "io/float16.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/gemm_float.h"
#include "kernels/quant/gemm_int8.h"

namespace difftx::kernels::quant {
namespace {

// Q4_0 and Q8_0 records are word copies of their blocks: the block's F16 d at the scales, then
// word v of its qs (4 bytes: Q4_0's byte j holds weights j and j + 16, so both are in the
// record's order) at record byte 64 v + 4 r.
struct WordBlocks {
  int words;            // 4-byte words of qs per block
  int64_t block_bytes;  // the stored block
};
WordBlocks word_blocks(WeightType type) {
  return {type == WeightType::q4_0 ? 4 : 8, weight_row_bytes(type, kPanelBlock)};
}

// The 32 weights q[0..32) of one row and block into the record's nibbles (row r).
void put_nibbles(const uint8_t* q, int r, uint8_t* record) {
  for (int v = 0; v < 4; ++v)
    for (int t = 0; t < 4; ++t)
      record[64 * v + 4 * r + t] = static_cast<uint8_t>(q[4 * v + t] | (q[16 + 4 * v + t] << 4));
}

void pack_row(const WeightMatrix& W, const uint8_t* row, int r, uint8_t* records, int64_t record_bytes) {
  const int64_t blocks = W.cols / kPanelBlock;
  const int64_t scales = panel_weight_bytes(W.type);
  if (W.type != WeightType::q4_k) {  // q4_0, q8_0
    const WordBlocks wb = word_blocks(W.type);
    for (int64_t i = 0; i < blocks; ++i) {
      const uint8_t* block = row + i * wb.block_bytes;
      uint8_t* record = records + i * record_bytes;
      std::memcpy(record + scales + 2 * r, block, 2);  // d
      for (int v = 0; v < wb.words; ++v) std::memcpy(record + 64 * v + 4 * r, block + 2 + 4 * v, 4);
    }
  } else {  // q4_k: sub-block j of a super-block is record 8 s + j
    const auto* b = reinterpret_cast<const BlockQ4_K*>(row);
    for (int64_t s = 0; s < W.cols / kQ4_KWeights; ++s) {
      const float d = io::f16_to_float(b[s].d), dmin = io::f16_to_float(b[s].dmin);
      for (int j = 0; j < kQ4_KSubBlocks; ++j) {
        uint8_t* record = records + (kQ4_KSubBlocks * s + j) * record_bytes;
        const ScaleMin sm = q4_k_scale_min(b[s].scales, j);
        const float scale = d * sm.scale, minimum = dmin * sm.min;
        std::memcpy(record + scales + 4 * r, &scale, 4);
        std::memcpy(record + scales + 4 * kPanelHeight + 4 * r, &minimum, 4);
        uint8_t q[kPanelBlock];
        for (int l = 0; l < kPanelBlock; ++l) {
          const uint8_t byte = b[s].qs[32 * (j / 2) + l];
          q[l] = j % 2 ? byte >> 4 : byte & 0xF;
        }
        put_nibbles(q, r, record);
      }
    }
  }
}

}  // namespace

bool has_panels(WeightType type) {
  return panel_record_bytes(type) > 0 || type == WeightType::bf16 || type == WeightType::f16;
}


int64_t panel_bytes(WeightType type, int64_t cols) {
  DIFFTX_CHECK(has_panels(type), "weight panels: no panel layout for ", weight_type_name(type));
  weight_row_bytes(type, cols);  // block multiple and negative sizes
  const int64_t per_column = panel_record_bytes(type) > 0 ? panel_record_bytes(type) : 2 * kPanelHeight;
  const int64_t columns = panel_record_bytes(type) > 0 ? cols / kPanelBlock : cols;
  int64_t bytes = 0;
  DIFFTX_CHECK(!__builtin_mul_overflow(columns, per_column, &bytes), "weight panels of ", cols,
               " columns overflow 64-bit sizes");
  return bytes;
}

int64_t weight_panels_bytes(WeightType type, int64_t rows, int64_t cols) {
  const int64_t one = panel_bytes(type, cols);
  DIFFTX_CHECK(rows >= 0, "weight panels: negative rows ", rows);
  int64_t bytes = 0;
  DIFFTX_CHECK(!__builtin_mul_overflow(panel_count(rows), one, &bytes), "weight panels of ",
               rows, " x ", cols, " overflow 64-bit sizes");
  return bytes;
}

bool panels_keep_rows(WeightType type) { return has_panels(type) && type != WeightType::q4_k; }

void panel_row_bytes(const WeightMatrix& W, int64_t r, uint8_t* out) {
  DIFFTX_CHECK(W.panels && panels_keep_rows(W.type) && r >= 0 && r < W.rows, "panel_row_bytes: row ", r, " of a ",
               weight_type_name(W.type), " matrix of ", W.rows, " rows ", W.panels ? "" : "without panels");
  const uint8_t* panel = static_cast<const uint8_t*>(W.panels) + r / kPanelHeight * panel_bytes(W.type, W.cols);
  const int lane = static_cast<int>(r % kPanelHeight);
  if (W.type == WeightType::bf16 || W.type == WeightType::f16) {
    for (int64_t k = 0; k < W.cols; ++k) std::memcpy(out + 2 * k, panel + 2 * (kPanelHeight * k + lane), 2);
    return;
  }
  // Q4_0, Q8_0: the inverse of pack_row's word copies
  const int64_t record_bytes = panel_record_bytes(W.type), scales = panel_weight_bytes(W.type);
  const WordBlocks wb = word_blocks(W.type);
  for (int64_t i = 0; i < W.cols / kPanelBlock; ++i) {
    const uint8_t* record = panel + i * record_bytes;
    uint8_t* block = out + i * wb.block_bytes;
    std::memcpy(block, record + scales + 2 * lane, 2);  // d
    for (int v = 0; v < wb.words; ++v) std::memcpy(block + 2 + 4 * v, record + 64 * v + 4 * lane, 4);
  }
}

void pack_panels(const WeightMatrix& W, int64_t first, int64_t count, uint8_t* out) {
  const int64_t record_bytes = panel_record_bytes(W.type), bytes = panel_bytes(W.type, W.cols);
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* panel = out + i * bytes;
    const int64_t r0 = (first + i) * kPanelHeight;
    const int rows = static_cast<int>(std::clamp<int64_t>(W.rows - r0, 0, kPanelHeight));
    if (rows < kPanelHeight) std::memset(panel, 0, bytes);  // rows past the end stay zero
    for (int r = 0; r < rows; ++r) {
      const uint8_t* row = static_cast<const uint8_t*>(W.data) + (r0 + r) * row_bytes;
      if (record_bytes > 0) {
        pack_row(W, row, r, panel, record_bytes);
      } else {  // bf16, f16: column k's 16 values together
        for (int64_t k = 0; k < W.cols; ++k) std::memcpy(panel + 2 * (kPanelHeight * k + r), row + 2 * k, 2);
      }
    }
  }
}

}  // namespace difftx::kernels::quant
