// The attention variants of docs/SPEC.md §2 described in one place. Everything that depends on which
// variant a layer runs (tensor widths, softmax maps, KV cache widths, the pair weight and where
// lambda comes from, FLOPs) is asked of AttentionVariant; kernels, the KV cache, eval and the
// FLOP counter hold no variant switches of their own. A new variant adds its case here, its
// kernels and its reference (docs/ARCHITECTURE.md).
//
// Every variant is a set of causal softmax "maps" of head width d. Output head i is
//   baseline: map i                                  (H maps; kv head i / (H / Hkv))
//   diff:     map 2i - w * map 2i+1, w = lambda      (2H maps: q1 / q2 of head i with k1 / k2 of
//             its kv head; value width 2d, docs/SPEC.md §2.2)
//   diff2:    map 2i - w * map 2i+1, w = sigmoid(lambda_i(x_t))  (2H query heads; kv head
//             j / (2H / Hkv); value width d, docs/SPEC.md §2.3)
//   diff_grouped: maps in groups of r + 1 (r signal maps, then one noise map); output head i is
//             its signal map minus w * its group's noise map, w = lambda (DIFF V1's k1/k2, value
//             width 2d and lambda; r = 1 is `diff`, docs/SPEC.md §2.5)
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

namespace difftx::kernels {

enum class AttentionKind { baseline, diff, diff2, diff_grouped };

AttentionKind attention_kind_from_name(const std::string& name);  // "baseline" | "diff" | "diff2" | "diff_grouped"
const char* attention_kind_name(AttentionKind kind);

// Where the pair weight's lambda comes from.
enum class LambdaSource {
  none,          // baseline: no pairs
  layer_scalar,  // diff, diff_grouped: one float per layer, exp(lq1.lk1) - exp(lq2.lk2) + lambda_init (Eq. 2)
  token_logits,  // diff2: [rows, H] logits lambda_proj(x), sigmoid applied by the kernels
};

struct AttentionVariant {
  AttentionKind kind;
  int64_t H;    // heads as docs/SPEC.md §2 defines them per variant (diff: differential heads; diff2: output
                // heads; diff_grouped: signal heads, which are its output heads)
  int64_t Hkv;  // key/value heads; H % Hkv == 0 (diff_grouped: noise heads H / r % Hkv == 0)
  int64_t d;    // head dimension of one softmax map
  int64_t r = 1;  // signal maps per noise map: 1 except for diff_grouped (docs/SPEC.md §2.5)

  bool paired() const { return kind != AttentionKind::baseline; }  // output = signal map - w noise map
  // DIFF V1's kv layout: key [k1 | k2] and value 2d per kv head, one lambda per layer (diff, diff_grouped).
  bool v1_layout() const { return kind == AttentionKind::diff || kind == AttentionKind::diff_grouped; }
  // Projection widths (row = one token).
  int64_t q_width() const { return maps() * d; }                          // one d-wide query per map
  int64_t k_width() const { return Hkv * key_width(); }                   // V1 layout 2 Hkv d, else Hkv d
  int64_t v_width() const { return Hkv * value_width(); }                 // V1 layout 2 Hkv d, else Hkv d
  int64_t out_width() const { return H * value_width(); }                 // V1 layout 2 H d, else H d
  // Per kv head and token: the key and value widths (what the KV cache stores).
  int64_t key_width() const { return v1_layout() ? 2 * d : d; }    // [k1 | k2] for the V1 layout
  int64_t value_width() const { return v1_layout() ? 2 * d : d; }  // = value width of one map
  // Softmax maps and how they share kv heads: the maps of kv head g are
  // [g * maps_per_kv_head, (g + 1) * maps_per_kv_head); map j reads q columns [j d, (j + 1) d).
  // Paired maps come in groups of r + 1: r signal maps, then the noise map they share.
  int64_t noise_maps() const { return paired() ? H / r : 0; }
  int64_t maps() const { return H + noise_maps(); }
  int64_t maps_per_kv_head() const { return maps() / Hkv; }
  int64_t key_heads_per_kv_head() const { return v1_layout() ? 2 : 1; }  // k1, k2
  // The key head (of width d, in a k row) that map j scores against.
  int64_t key_head(int64_t map) const {
    const int64_t g = map / maps_per_kv_head();
    return v1_layout() ? 2 * g + subtracted(map) : g;  // V1 layout: signal maps use k1, noise maps k2
  }
  // Whether map j is a noise map (subtracted), and the maps output head i is made of.
  bool subtracted(int64_t map) const { return paired() && map % (r + 1) == r; }
  int64_t signal_map(int64_t head) const { return paired() ? head / r * (r + 1) + head % r : head; }
  int64_t noise_map(int64_t head) const { return head / r * (r + 1) + r; }  // paired variants only

  LambdaSource lambda_source() const {
    return v1_layout() ? LambdaSource::layer_scalar
           : kind == AttentionKind::diff2 ? LambdaSource::token_logits
                                          : LambdaSource::none;
  }
  // Floats of lambda for `rows` token rows: 0, 1 or rows * H.
  int64_t lambda_floats(int64_t rows) const {
    switch (lambda_source()) {
      case LambdaSource::none: return 0;
      case LambdaSource::layer_scalar: return 1;
      case LambdaSource::token_logits: return rows * H;
    }
    return 0;
  }
  // The pair weight w of output head `head` at token row `row` (paired variants only): the one
  // definition used by the flash kernels, the decode kernel, eval's attention maps and the
  // reference. Computed in Real from lambda's stored type In.
  template <typename Real, typename In>
  Real pair_weight(const In* lambda, int64_t row, int64_t head) const {
    if (v1_layout()) return static_cast<Real>(lambda[0]);
    return Real(1) / (Real(1) + std::exp(-static_cast<Real>(lambda[row * H + head])));
  }

  // FLOPs of one causal attention forward over T tokens of one sequence (docs/SPEC.md §4): every map
  // scores T (T + 1) / 2 (query, key) pairs at 2d each and sums values at 2 * value width.
  double forward_flops(int64_t T) const {
    const double unmasked = static_cast<double>(T) * (T + 1) / 2.0;
    return static_cast<double>(maps()) * unmasked * (2.0 * d + 2.0 * value_width());
  }

  void validate() const;  // throws difftx::Error naming the bad field
};

}  // namespace difftx::kernels
