// AttentionDims: the tensor widths of SPEC §2 per variant, validation, and kind names.
#include "core/error.h"
#include "kernels/attention/attention.h"

namespace difftx {

AttentionKind attention_kind_from_name(const std::string& name) {
  if (name == "baseline") return AttentionKind::baseline;
  if (name == "diff") return AttentionKind::diff;
  if (name == "diff2") return AttentionKind::diff2;
  fail("attention kind '", name, "': expected \"baseline\", \"diff\" or \"diff2\"");
}

const char* attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::baseline: return "baseline";
    case AttentionKind::diff: return "diff";
    case AttentionKind::diff2: return "diff2";
  }
  fail("attention kind: invalid enum value ", static_cast<int>(kind));
}

int64_t AttentionDims::q_width() const { return kind == AttentionKind::baseline ? H * d : 2 * H * d; }
int64_t AttentionDims::k_width() const { return kind == AttentionKind::diff ? 2 * Hkv * d : Hkv * d; }
int64_t AttentionDims::v_width() const { return kind == AttentionKind::diff ? Hkv * 2 * d : Hkv * d; }
int64_t AttentionDims::out_width() const { return kind == AttentionKind::diff ? H * 2 * d : H * d; }

void AttentionDims::validate() const {
  DIFFTX_CHECK(kind == AttentionKind::baseline || kind == AttentionKind::diff ||
                   kind == AttentionKind::diff2,
               "attention dims: field 'kind' is not a valid AttentionKind (", static_cast<int>(kind), ")");
  const char* name = attention_kind_name(kind);
  DIFFTX_CHECK(B >= 1, "attention dims (", name, "): field 'B' (batch) must be >= 1, got ", B);
  DIFFTX_CHECK(T >= 1, "attention dims (", name, "): field 'T' (sequence length) must be >= 1, got ", T);
  DIFFTX_CHECK(H >= 1, "attention dims (", name, "): field 'H' (heads) must be >= 1, got ", H);
  DIFFTX_CHECK(Hkv >= 1, "attention dims (", name, "): field 'Hkv' (key/value heads) must be >= 1, got ", Hkv);
  DIFFTX_CHECK(H % Hkv == 0, "attention dims (", name, "): field 'Hkv' must divide H (GQA, SPEC §2), got H=", H,
               " Hkv=", Hkv);
  DIFFTX_CHECK(d >= 1, "attention dims (", name, "): field 'd' (head dimension) must be >= 1, got ", d);
  // Buffers are indexed with 64-bit offsets; keep every size far from overflow.
  const int64_t field_limit = int64_t{1} << 20, total_limit = int64_t{1} << 40;
  DIFFTX_CHECK(H <= field_limit && d <= field_limit, "attention dims (", name,
               "): fields 'H' and 'd' must be <= 2^20, got H=", H, " d=", d);
  DIFFTX_CHECK(B <= total_limit / T && B * T <= total_limit / (4 * H * d), "attention dims (", name,
               "): B*T*H*d too large (B=", B, " T=", T, " H=", H, " d=", d, ")");
}

int64_t attention_lse_floats(const AttentionDims& dims) {
  const int64_t maps = dims.kind == AttentionKind::baseline ? dims.H : 2 * dims.H;
  return dims.B * maps * dims.T;
}

int64_t attention_maps_out_floats(const AttentionDims& dims) {
  if (dims.kind == AttentionKind::baseline) return 0;
  return dims.B * dims.T * 2 * dims.out_width();  // [B, T, 2H, dv]: each output head has two maps
}

}  // namespace difftx
