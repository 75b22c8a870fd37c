// Reference attention (docs/SPEC.md §2): every causal softmax map materialised as a T x T matrix, all
// arithmetic in double. Slow on purpose; the fused kernels are tested against it, and the
// quantized-logit kernel (attention_quantized.h) against its `bits` variant.
//
// Every variant is a sum of terms  out_i[t] += c[t] * (P v_g)[t],  P = softmax(q k^T / sqrt(d) + mask):
//   baseline  head i:     one term, q_i with k_g, v_g (g = i / n_rep), c = 1
//   diff      head i:     q1_i with k1_g (c = 1) and q2_i with k2_g (c = -lambda), value v_g of width 2d
//   diff2     out head i: query heads 2i (c = 1) and 2i+1 (c = -sigmoid(logit[t, i])), each with kv
//                         head j / (2H / Hkv) for query head j
//   diff_grouped head i:  query heads in groups of r + 1 (r signal, then noise); signal query
//                         head n (r + 1) + i % r (n = i / r) with k1_g (c = 1), noise query head
//                         n (r + 1) + r with k2_g (c = -lambda), g = n / (N / Hkv), N = H / r noise
//                         heads; value v_g of width 2d (docs/SPEC.md §2.5)
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/attention/attention_quantized.h"
#include "reference/attention_reference.h"

namespace difftx {

using kernels::AttentionDims;
using kernels::AttentionKind;

namespace {

// One term for batch row b: column offsets into q, k, v and out, and how c is formed.
struct Term {
  int64_t q_col, k_col, v_col, out_col;
  enum class Coef { one, minus_lambda, minus_sigmoid } coef;
  int64_t lambda_head;  // diff2: which logit column
};

std::vector<Term> terms_of(const AttentionDims& a) {
  const int64_t d = a.d, n_rep = a.H / a.Hkv;
  std::vector<Term> terms;
  for (int64_t i = 0; i < a.H; ++i) {
    switch (a.kind) {
      case AttentionKind::baseline: {
        const int64_t g = i / n_rep;
        terms.push_back({i * d, g * d, g * d, i * d, Term::Coef::one, 0});
        break;
      }
      case AttentionKind::diff: {  // docs/SPEC.md §2.2: q = [q1|q2] per head, k = [k1|k2] per kv head
        const int64_t g = i / n_rep;
        terms.push_back({2 * i * d, 2 * g * d, g * 2 * d, i * 2 * d, Term::Coef::one, 0});
        terms.push_back({(2 * i + 1) * d, (2 * g + 1) * d, g * 2 * d, i * 2 * d, Term::Coef::minus_lambda, 0});
        break;
      }
      case AttentionKind::diff_grouped: {  // docs/SPEC.md §2.5
        const int64_t r = a.r, n = i / r, g = n / (a.H / r / a.Hkv);
        terms.push_back({(n * (r + 1) + i % r) * d, 2 * g * d, g * 2 * d, i * 2 * d, Term::Coef::one, 0});
        terms.push_back({(n * (r + 1) + r) * d, (2 * g + 1) * d, g * 2 * d, i * 2 * d, Term::Coef::minus_lambda, 0});
        break;
      }
      case AttentionKind::diff2: {  // docs/SPEC.md §2.3: adjacent query heads (2i, 2i+1) form output head i
        const int64_t per_kv = 2 * a.H / a.Hkv;
        for (int64_t s = 0; s < 2; ++s) {
          const int64_t j = 2 * i + s, g = j / per_kv;
          terms.push_back({j * d, g * d, g * d, i * d, s == 0 ? Term::Coef::one : Term::Coef::minus_sigmoid, i});
        }
        break;
      }
    }
  }
  return terms;
}

int64_t value_width(const AttentionDims& a) { return a.variant().value_width(); }

// c[t] of a term for batch row b: 1, or minus the variant's pair weight.
double coefficient(const AttentionDims& a, const Term& term, const double* lambda, int64_t b, int64_t t) {
  if (term.coef == Term::Coef::one) return 1.0;
  return -a.variant().pair_weight<double>(lambda, b * a.T + t, term.lambda_head);
}

// The first key query t sees: t - window + 1 with a sliding window, else 0.
int64_t first_key(const AttentionDims& a, int64_t t) { return a.window > 0 ? std::max<int64_t>(0, t - a.window + 1) : 0; }

// P[t][s] = softmax over the keys s that query t sees (first_key(t) <= s <= t) of q_t . k_s / sqrt(d);
// zero elsewhere, so that the loops over s <= t below need no window of their own. With bits > 0
// the products q_t . k_s of the whole map are absmax fake-quantized first (attention_quantized.h).
void softmax_map(const AttentionDims& a, const double* q, const double* k, int64_t b, const Term& term,
                 std::vector<double>& P, int bits = 0) {
  const int64_t T = a.T, d = a.d, qw = a.q_width(), kw = a.k_width();
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  P.assign(T * T, 0.0);
  double absmax = 0;
  for (int64_t t = 0; t < T; ++t) {
    const double* qt = q + (b * T + t) * qw + term.q_col;
    for (int64_t s = first_key(a, t); s <= t; ++s) {
      const double* ks = k + (b * T + s) * kw + term.k_col;
      double dot = 0;
      for (int64_t x = 0; x < d; ++x) dot += qt[x] * ks[x];
      P[t * T + s] = dot;
      absmax = std::max(absmax, std::fabs(dot));
    }
  }
  const kernels::AbsmaxQuantizer quantize(absmax, bits);
  for (int64_t t = 0; t < T; ++t) {
    double* row = P.data() + t * T;
    double mx = -INFINITY;
    for (int64_t s = first_key(a, t); s <= t; ++s) {
      row[s] = quantize(row[s]) * scale;
      mx = std::max(mx, row[s]);
    }
    double sum = 0;
    for (int64_t s = first_key(a, t); s <= t; ++s) sum += (row[s] = std::exp(row[s] - mx));
    for (int64_t s = first_key(a, t); s <= t; ++s) row[s] /= sum;
  }
}

void check_pointers(const AttentionDims& a, const void* q, const void* k, const void* v, const void* lambda) {
  a.validate();
  DIFFTX_CHECK(q && k && v, "attention reference: tensors q, k and v must not be null");
  DIFFTX_CHECK(a.kind == AttentionKind::baseline || lambda, "attention reference (",
               kernels::attention_kind_name(a.kind), "): tensor lambda must not be null");
}

}  // namespace

int64_t attention_lambda_floats(const AttentionDims& a) { return a.variant().lambda_floats(a.B * a.T); }

void attention_forward_reference(const AttentionDims& a, const double* q, const double* k, const double* v,
                                 const double* lambda, double* out) {
  attention_forward_quantized_reference(a, q, k, v, lambda, out, 0);
}

void attention_forward_quantized_reference(const AttentionDims& a, const double* q, const double* k,
                                           const double* v, const double* lambda, double* out, int bits) {
  check_pointers(a, q, k, v, lambda);
  kernels::check_logit_bits(bits);
  DIFFTX_CHECK(out, "attention reference: tensor out must not be null");
  const int64_t T = a.T, dv = value_width(a), vw = a.v_width(), ow = a.out_width();
  std::fill(out, out + a.B * T * ow, 0.0);
  std::vector<double> P;
  for (int64_t b = 0; b < a.B; ++b)
    for (const Term& term : terms_of(a)) {
      softmax_map(a, q, k, b, term, P, bits);
      for (int64_t t = 0; t < T; ++t) {
        const double c = coefficient(a, term, lambda, b, t);
        double* y = out + (b * T + t) * ow + term.out_col;
        for (int64_t s = 0; s <= t; ++s) {
          const double w = c * P[t * T + s];
          const double* vs = v + (b * T + s) * vw + term.v_col;
          for (int64_t x = 0; x < dv; ++x) y[x] += w * vs[x];
        }
      }
    }
}

void attention_backward_reference(const AttentionDims& a, const double* q, const double* k, const double* v,
                                  const double* lambda, const double* dout, double* dq, double* dk, double* dv,
                                  double* dlambda) {
  check_pointers(a, q, k, v, lambda);
  DIFFTX_CHECK(dout && dq && dk && dv, "attention reference: tensors dout, dq, dk and dv must not be null");
  DIFFTX_CHECK(a.kind == AttentionKind::baseline || dlambda, "attention reference (",
               kernels::attention_kind_name(a.kind), "): tensor dlambda must not be null");
  const int64_t T = a.T, d = a.d, vdim = value_width(a);
  const int64_t qw = a.q_width(), kw = a.k_width(), vw = a.v_width(), ow = a.out_width();
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::fill(dq, dq + a.B * T * qw, 0.0);
  std::fill(dk, dk + a.B * T * kw, 0.0);
  std::fill(dv, dv + a.B * T * vw, 0.0);
  if (dlambda) std::fill(dlambda, dlambda + attention_lambda_floats(a), 0.0);
  std::vector<double> P, dZ(T);
  for (int64_t b = 0; b < a.B; ++b)
    for (const Term& term : terms_of(a)) {
      softmax_map(a, q, k, b, term, P);
      for (int64_t t = 0; t < T; ++t) {
        const double c = coefficient(a, term, lambda, b, t);
        const double* dy = dout + (b * T + t) * ow + term.out_col;
        // dP[s] = c * dy . v_s; the coefficient's own gradient is dy . (P v)_t.
        double dc = 0, rowsum = 0;
        for (int64_t s = 0; s <= t; ++s) {
          const double* vs = v + (b * T + s) * vw + term.v_col;
          double dot = 0;
          for (int64_t x = 0; x < vdim; ++x) dot += dy[x] * vs[x];
          dc += P[t * T + s] * dot;
          dZ[s] = c * dot;
          rowsum += P[t * T + s] * dZ[s];
          double* dvs = dv + (b * T + s) * vw + term.v_col;
          for (int64_t x = 0; x < vdim; ++x) dvs[x] += c * P[t * T + s] * dy[x];
        }
        // Softmax backward: dZ = P o (dP - rowsum(P o dP)), then through the 1/sqrt(d) scores.
        const double* qt = q + (b * T + t) * qw + term.q_col;
        double* dqt = dq + (b * T + t) * qw + term.q_col;
        for (int64_t s = 0; s <= t; ++s) {
          const double g = P[t * T + s] * (dZ[s] - rowsum) * scale;
          const double* ks = k + (b * T + s) * kw + term.k_col;
          double* dks = dk + (b * T + s) * kw + term.k_col;
          for (int64_t x = 0; x < d; ++x) {
            dqt[x] += g * ks[x];
            dks[x] += g * qt[x];
          }
        }
        if (term.coef == Term::Coef::minus_lambda) dlambda[0] -= dc;
        if (term.coef == Term::Coef::minus_sigmoid) {
          const double s = -c;  // sigmoid(logit)
          dlambda[(b * T + t) * a.H + term.lambda_head] -= dc * s * (1.0 - s);
        }
      }
    }
}

// The float entry points of attention.h: convert, run in double, convert back.
namespace {
std::vector<double> widen(const float* x, int64_t n) {
  return x ? std::vector<double>(x, x + n) : std::vector<double>();
}
void narrow(const std::vector<double>& x, float* out) {
  for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(x[i]);
}
}  // namespace

void attention_forward_reference(const AttentionDims& a, const float* q, const float* k, const float* v,
                                 const float* lambda, float* out) {
  attention_forward_quantized_reference(a, q, k, v, lambda, out, 0);
}

void attention_forward_quantized_reference(const AttentionDims& a, const float* q, const float* k, const float* v,
                                           const float* lambda, float* out, int bits) {
  check_pointers(a, q, k, v, lambda);
  DIFFTX_CHECK(out, "attention reference: tensor out must not be null");
  const int64_t N = a.B * a.T;
  const auto qd = widen(q, N * a.q_width()), kd = widen(k, N * a.k_width()), vd = widen(v, N * a.v_width());
  const auto ld = widen(lambda, attention_lambda_floats(a));
  std::vector<double> od(N * a.out_width());
  attention_forward_quantized_reference(a, qd.data(), kd.data(), vd.data(), ld.data(), od.data(), bits);
  narrow(od, out);
}

void attention_backward_reference(const AttentionDims& a, const float* q, const float* k, const float* v,
                                  const float* lambda, const float* dout, float* dq, float* dk, float* dv,
                                  float* dlambda) {
  check_pointers(a, q, k, v, lambda);
  DIFFTX_CHECK(dout && dq && dk && dv, "attention reference: tensors dout, dq, dk and dv must not be null");
  DIFFTX_CHECK(a.kind == AttentionKind::baseline || dlambda, "attention reference (",
               kernels::attention_kind_name(a.kind), "): tensor dlambda must not be null");
  const int64_t N = a.B * a.T;
  const auto qd = widen(q, N * a.q_width()), kd = widen(k, N * a.k_width()), vd = widen(v, N * a.v_width());
  const auto ld = widen(lambda, attention_lambda_floats(a)), gd = widen(dout, N * a.out_width());
  std::vector<double> dqd(qd.size()), dkd(kd.size()), dvd(vd.size()), dld(ld.size());
  attention_backward_reference(a, qd.data(), kd.data(), vd.data(), ld.data(), gd.data(), dqd.data(), dkd.data(),
                               dvd.data(), dld.data());
  narrow(dqd, dq);
  narrow(dkd, dk);
  narrow(dvd, dv);
  if (dlambda) narrow(dld, dlambda);
}

}  // namespace difftx
