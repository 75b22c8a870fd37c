// Validation of AttentionDims and AttentionVariant, and the variants' names.
#include "core/enum_names.h"
#include "core/error.h"
#include "kernels/attention/attention.h"

namespace difftx::kernels {

namespace {
constexpr EnumName<AttentionKind> kAttentionKindNames[] = {{AttentionKind::baseline, "baseline"},
                                                          {AttentionKind::diff, "diff"},
                                                          {AttentionKind::diff2, "diff2"},
                                                          {AttentionKind::diff_grouped, "diff_grouped"}};
}  // namespace

AttentionKind attention_kind_from_name(const std::string& name) {
  if (const auto kind = value_named(kAttentionKindNames, name)) return *kind;
  fail("attention kind '", name, "': expected \"baseline\", \"diff\", \"diff2\" or \"diff_grouped\"");
}

const char* attention_kind_name(AttentionKind kind) {
  if (const char* name = find_name(kAttentionKindNames, kind)) return name;
  fail("attention kind: invalid enum value ", static_cast<int>(kind));
}

void AttentionVariant::validate() const { AttentionDims{kind, 1, 1, H, Hkv, d, r}.validate(); }

void AttentionDims::validate() const {
  DIFFTX_CHECK(kind == AttentionKind::baseline || kind == AttentionKind::diff ||
                   kind == AttentionKind::diff2 || kind == AttentionKind::diff_grouped,
               "attention dims: field 'kind' is not a valid AttentionKind (", static_cast<int>(kind), ")");
  const char* name = attention_kind_name(kind);
  DIFFTX_CHECK(B >= 1, "attention dims (", name, "): field 'B' (batch) must be >= 1, got ", B);
  DIFFTX_CHECK(T >= 1, "attention dims (", name, "): field 'T' (sequence length) must be >= 1, got ", T);
  DIFFTX_CHECK(H >= 1, "attention dims (", name, "): field 'H' (heads) must be >= 1, got ", H);
  DIFFTX_CHECK(Hkv >= 1, "attention dims (", name, "): field 'Hkv' (key/value heads) must be >= 1, got ", Hkv);
  DIFFTX_CHECK(H % Hkv == 0, "attention dims (", name, "): field 'Hkv' must divide H (GQA, docs/SPEC.md §2), got H=", H,
               " Hkv=", Hkv);
  DIFFTX_CHECK(d >= 1, "attention dims (", name, "): field 'd' (head dimension) must be >= 1, got ", d);
  DIFFTX_CHECK(r == 1 || kind == AttentionKind::diff_grouped, "attention dims (", name,
               "): field 'r' (signal maps per noise map) must be 1 unless the variant is diff_grouped, got ", r);
  DIFFTX_CHECK(r >= 1 && r <= H && H % r == 0, "attention dims (", name, "): field 'r' (signal maps per noise map) must divide H=",
               H, ", got ", r);
  // docs/SPEC.md §2.5: every kv head serves whole groups of r signal heads and their noise head.
  DIFFTX_CHECK(H / r % Hkv == 0, "attention dims (", name, "): field 'Hkv' must divide the noise heads H / r = ", H / r,
               " (every kv head serves whole groups), got Hkv=", Hkv);
  DIFFTX_CHECK(window >= 0 && window <= int64_t{1} << 30, "attention dims (", name,
               "): field 'window' (sliding window, 0 for none) must be in [0, 2^30], got ", window);
  // Buffers are indexed with 64-bit offsets; keep every size far from overflow.
  const int64_t field_limit = int64_t{1} << 20, total_limit = int64_t{1} << 40;
  DIFFTX_CHECK(H <= field_limit && d <= field_limit, "attention dims (", name,
               "): fields 'H' and 'd' must be <= 2^20, got H=", H, " d=", d);
  DIFFTX_CHECK(B <= total_limit / T && B * T <= total_limit / (4 * H * d), "attention dims (", name,
               "): B*T*H*d too large (B=", B, " T=", T, " H=", H, " d=", d, ")");
}

int64_t attention_lse_floats(const AttentionDims& dims) { return dims.B * dims.variant().maps() * dims.T; }

int64_t attention_maps_out_floats(const AttentionDims& dims) {
  const AttentionVariant v = dims.variant();
  return v.paired() ? dims.B * dims.T * v.maps() * v.value_width() : 0;  // [B, T, maps, dv]
}

}  // namespace difftx::kernels
