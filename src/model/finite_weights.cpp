#include "model/finite_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/quant/quantize.h"

namespace difftx::model {
namespace {

void require_finite(const float* w, int64_t n, int64_t first, const std::string& where, const std::string& name) {
  for (int64_t i = 0; i < n; ++i)
    DIFFTX_CHECK(std::isfinite(w[i]), where, ": tensor '", name, "' holds a non-finite value (", w[i],
                 " at element ", first + i, "); a model with NaN or Inf weights gives only NaN outputs");
}

// Whether every float of w[0, n) is finite (its exponent field not all ones): one pass without
// an early exit, so that it vectorises.
bool all_finite(const float* w, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, w + i, sizeof bits);
    bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

struct Piece {
  const float* w;
  int64_t n, first;  // floats, and the tensor's index of the first
};

// One tensor in `count` pieces checked on the OpenMP threads; piece(i, scratch) gives piece i,
// widened into `scratch` (scratch_floats a thread) where the tensor is packed. The error names
// the first non-finite element, as one scan in order would.
template <typename PieceOf>
void require_finite_pieces(int64_t count, int64_t scratch_floats, const PieceOf& piece, const std::string& where,
                           const std::string& name) {
  std::vector<char> finite(count);
#pragma omp parallel
  {
    std::vector<float> scratch(scratch_floats);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < count; ++i) {
      const Piece p = piece(i, scratch.data());
      finite[i] = all_finite(p.w, p.n);
    }
  }
  const auto bad = std::find(finite.begin(), finite.end(), 0);
  if (bad == finite.end()) return;
  std::vector<float> scratch(scratch_floats);
  const Piece p = piece(bad - finite.begin(), scratch.data());
  require_finite(p.w, p.n, p.first, where, name);
}

}  // namespace

void require_finite_tensor(std::span<const float> weights, const std::string& name, const std::string& where) {
  require_finite(weights.data(), static_cast<int64_t>(weights.size()), 0, where, name);
}

void require_finite_weights(const Model& model, const std::string& where) {
  for (const ParamInfo& p : model.table.params()) {
    if (!p.packed()) {
      const float* w = model.host_weights() + p.offset;
      constexpr int64_t kPiece = int64_t{1} << 16;
      require_finite_pieces((p.numel + kPiece - 1) / kPiece, 0, [&](int64_t i, float*) {
        return Piece{w + i * kPiece, std::min(kPiece, p.numel - i * kPiece), i * kPiece};
      }, where, p.name);
      continue;
    }
    // Packed matrices are checked as they multiply: widened, a few rows at a time.
    const int64_t rows = p.shape[0], cols = p.shape[1], row_bytes = p.bytes() / rows, chunk = 64;
    const unsigned char* packed = model.host_packed() + p.byte_offset;
    require_finite_pieces((rows + chunk - 1) / chunk, chunk * cols, [&](int64_t i, float* scratch) {
      const int64_t r = i * chunk, n = std::min(chunk, rows - r);
      backends::cpu::kernels().dequantize_rows(p.type, packed + r * row_bytes, scratch, n, cols);
      return Piece{scratch, n * cols, r * cols};
    }, where, p.name);
  }
}

}  // namespace difftx::model
