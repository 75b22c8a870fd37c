#include "backends/cpu/cpu_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "core/error.h"
#include "kernels/attention/attention_quantized.h"
#include "kernels/polynorm.h"
#include "kernels/quant/weight_panels.h"

namespace difftx::backends::cpu {
namespace {

template <typename T>
T* host(DevicePtr<T> p) {
  return p.host();
}

// Gives the whole pages inside [data, data + bytes) back to the system (they read as zeros after).
void release_pages(const void* data, int64_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (start + page - 1) / page * page, last = (start + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(CpuLevel level, const CpuKernels& k) : level_(level), k_(k) {
    info_.name = std::string("cpu (") + cpu_level_name(level) + ")";
    info_.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    info_.features = cpu_level_name(level);
  }

  const DeviceInfo& info() const override { return info_; }
  bool host_memory() const override { return true; }
  bool trains() const override { return true; }
  bool runs_hybrid() const override { return true; }

  DeviceBuffer allocate(int64_t bytes, bool zero_fill) override {
    DIFFTX_CHECK(bytes >= 0, "cpu: cannot allocate ", bytes, " bytes");
    if (bytes == 0) return {};
    // Buffers of 2 MiB and more (weights, KV pools, arenas) in transparent huge pages where the
    // kernel gives them: a 2 MiB page is one fault to fill and one TLB entry to stream, where 4 KiB
    // pages are 512 of each. Linux's default ("madvise") gives them only where asked.
    constexpr size_t kHugePage = size_t{2} << 20;
    const size_t align = static_cast<size_t>(bytes) >= kHugePage ? kHugePage : 64;
    const size_t rounded = (static_cast<size_t>(bytes) + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    if (!p) throw std::bad_alloc();  // the CLI names the options whose sizes ask for too much
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    if (zero_fill) std::memset(p, 0, rounded);
    return DeviceBuffer(this, reinterpret_cast<uintptr_t>(p), bytes);
  }
  void upload(DevicePtr<void> dst, const void* src, int64_t bytes) override {
    if (bytes > 0) std::memcpy(dst.host(), src, static_cast<size_t>(bytes));
  }
  void download(void* dst, DevicePtr<const void> src, int64_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src.host(), static_cast<size_t>(bytes));
  }
  void copy(DevicePtr<void> dst, DevicePtr<const void> src, int64_t bytes) override {
    if (bytes > 0) std::memmove(dst.host(), src.host(), static_cast<size_t>(bytes));
  }
  void zero(DevicePtr<void> dst, int64_t bytes) override {
    if (bytes > 0) std::memset(dst.host(), 0, static_cast<size_t>(bytes));
  }
  void synchronize() override {}

  PreparedMatrix prepare_matrix(const DeviceMatrix& stored, bool release_stored, bool looked_up) override {
    PreparedMatrix out{stored, {}};
    if (!stored.data || !k_.reads_panels(stored.type)) return out;
    const kernels::WeightMatrix w = host_matrix(stored);
    out.storage = allocate(kernels::quant::weight_panels_bytes(w.type, w.rows, w.cols), true);
    auto* panels = host(out.storage.as<uint8_t>());
    const int64_t count = kernels::quant::panel_count(w.rows);
    const int64_t panel_bytes = kernels::quant::panel_bytes(w.type, w.cols);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < count; ++p) kernels::quant::pack_panels(w, p, 1, panels + p * panel_bytes);
    out.matrix.panels = out.storage.as<const void>();
    if (release_stored && (!looked_up || kernels::quant::panels_keep_rows(w.type))) {
      release_pages(w.data, kernels::weight_matrix_bytes(w.type, w.rows, w.cols));
      out.matrix.data = nullptr;
    }
    return out;
  }

  void matmul(const DeviceMatrix& W, DevicePtr<const float> x, DevicePtr<float> y, int64_t N, bool accumulate,
              kernels::MatmulOrder order) override {
    const kernels::WeightMatrix w = host_matrix(W);
    if (order != kernels::MatmulOrder::by_size) return k_.matmul_by_order(w, host(x), host(y), N, accumulate, order);
    if (w.type != kernels::WeightType::f32)
      return k_.matmul_by_path(w, host(x), host(y), N, accumulate, kernels::MatmulPath::best);
    // F32 by size: one row takes the decode GEMV's order (the row dots), more rows OpenBLAS.
    if (N == 1) return k_.matmul_by_order(w, host(x), host(y), 1, accumulate, kernels::MatmulOrder::gemv);
    kernels::gemm(kernels::Trans::N, kernels::Trans::T, N, w.rows, w.cols, 1.0f, host(x),
                  static_cast<const float*>(w.data), accumulate ? 1.0f : 0.0f, host(y));
  }
  void gemm(kernels::Trans ta, kernels::Trans tb, int64_t M, int64_t N, int64_t K, float alpha,
            DevicePtr<const float> A, DevicePtr<const float> B, float beta, DevicePtr<float> C) override {
    kernels::gemm(ta, tb, M, N, K, alpha, host(A), host(B), beta, host(C));
  }
  void embed(const DeviceMatrix& E, DevicePtr<const int32_t> tokens, DevicePtr<float> out, int64_t N) override {
    const kernels::WeightMatrix e = host_matrix(E);
    const int32_t* ids = host(tokens);
    float* rows = host(out);
    if (e.type == kernels::WeightType::f32 && e.data)
      return kernels::embedding_forward(static_cast<const float*>(e.data), ids, rows, N, e.cols, e.rows);
    for (int64_t i = 0; i < N; ++i)
      DIFFTX_CHECK(ids[i] >= 0 && ids[i] < e.rows, "token id ", ids[i], " at position ", i,
                   " is outside the vocabulary [0, ", e.rows, ")");
    const int64_t row_bytes = kernels::weight_row_bytes(e.type, e.cols);
    std::vector<uint8_t> row(e.data ? 0 : row_bytes);  // a tied head held as panels only
    for (int64_t i = 0; i < N; ++i) {
      const auto* bytes = static_cast<const uint8_t*>(e.data) + ids[i] * row_bytes;
      if (!e.data) kernels::quant::panel_row_bytes(e, ids[i], row.data()), bytes = row.data();
      k_.dequantize_rows(e.type, bytes, rows + i * e.cols, 1, e.cols);
    }
  }
  void embedding_backward(DevicePtr<const int32_t> ids, DevicePtr<const float> dy, DevicePtr<float> dtable,
                          int64_t rows, int64_t n) override {
    kernels::embedding_backward(host(ids), host(dy), host(dtable), rows, n);
  }

  void rmsnorm_forward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<float> y, DevicePtr<float> rstd,
                       int64_t rows, int64_t n, float eps) override {
    k_.rmsnorm_forward(host(x), host(g), host(y), host(rstd), rows, n, eps);
  }
  void rmsnorm_backward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<const float> rstd,
                        DevicePtr<const float> dy, DevicePtr<float> dx, DevicePtr<float> dg, int64_t rows,
                        int64_t n) override {
    k_.rmsnorm_backward(host(x), host(g), host(rstd), host(dy), host(dx), host(dg), rows, n);
  }
  void rope(const DeviceRope& table, kernels::RopeStyle style, DevicePtr<float> x, int64_t heads,
            const RopePositions& at, bool inverse) override {
    const kernels::RopeTable t{table.max_T, table.d, const_cast<float*>(host(table.cos)),
                               const_cast<float*>(host(table.sin))};
    const auto rotate = inverse ? k_.rope_backward : k_.rope_forward;
    float* rows = host(x);
    if (!at.positions) return rotate(t, style, rows, at.B, at.T, heads, at.pos0);
    const int64_t* positions = host(at.positions);
    const int64_t width = heads * table.d;
    for (int64_t i = 0; i < at.T; ++i) rotate(t, style, rows + i * width, 1, 1, heads, positions[i]);
  }
  void swiglu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<float> h, int64_t n) override {
    k_.swiglu_forward(host(g), host(u), host(h), n);
  }
  void swiglu_backward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> dh,
                       DevicePtr<float> dg, DevicePtr<float> du, int64_t n) override {
    k_.swiglu_backward(host(g), host(u), host(dh), host(dg), host(du), n);
  }
  void polynorm_glu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                            DevicePtr<const float> b, DevicePtr<float> h, int64_t rows, int64_t F) override {
    kernels::polynorm_glu_forward(host(g), host(u), host(w), host(b), host(h), rows, F);
  }
  void polynorm_glu_backward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                             DevicePtr<const float> b, DevicePtr<const float> dh, DevicePtr<float> dg,
                             DevicePtr<float> du, DevicePtr<float> dw, DevicePtr<float> db, int64_t rows,
                             int64_t F) override {
    kernels::polynorm_glu_backward(host(g), host(u), host(w), host(b), host(dh), host(dg), host(du), host(dw),
                                   host(db), rows, F);
  }
  void add(DevicePtr<float> y, DevicePtr<const float> x, int64_t n) override {
    float* out = host(y);
    const float* in = host(x);
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
    for (int64_t i = 0; i < n; ++i) out[i] += in[i];
  }
  void scale(DevicePtr<float> y, DevicePtr<const float> x, float s, int64_t n) override {
    float* out = host(y);
    const float* in = host(x);
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
    for (int64_t i = 0; i < n; ++i) out[i] = s * in[i];
  }
  void gather_rows(DevicePtr<const float> src, DevicePtr<const int32_t> rows, int64_t count, int64_t width,
                   DevicePtr<float> dst) override {
    const float* in = host(src);
    const int32_t* index = host(rows);
    float* out = host(dst);
    for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * width, in + index[i] * width, sizeof(float) * width);
  }

  void diff_lambda(DevicePtr<const float> lq1, DevicePtr<const float> lk1, DevicePtr<const float> lq2,
                   DevicePtr<const float> lk2, int64_t d, double lambda_init, DevicePtr<float> out) override {
    *host(out) = static_cast<float>(std::exp(dot(host(lq1), host(lk1), d)) - std::exp(dot(host(lq2), host(lk2), d)) +
                                    lambda_init);
  }
  void diff_lambda_backward(DevicePtr<const float> lq1_, DevicePtr<const float> lk1_, DevicePtr<const float> lq2_,
                            DevicePtr<const float> lk2_, int64_t d, DevicePtr<const float> dlambda,
                            DevicePtr<float> glq1, DevicePtr<float> glk1, DevicePtr<float> glq2,
                            DevicePtr<float> glk2) override {
    // d lambda / d lq1 = exp(lq1.lk1) lk1, and so on (Eq. 2), times the scalar d loss / d lambda.
    const float *lq1 = host(lq1_), *lk1 = host(lk1_), *lq2 = host(lq2_), *lk2 = host(lk2_);
    float *gq1 = host(glq1), *gk1 = host(glk1), *gq2 = host(glq2), *gk2 = host(glk2);
    const double dl = *host(dlambda);
    const double e1 = std::exp(dot(lq1, lk1, d)), e2 = std::exp(dot(lq2, lk2, d));
    for (int64_t i = 0; i < d; ++i) {
      gq1[i] += static_cast<float>(dl * e1 * lk1[i]);
      gk1[i] += static_cast<float>(dl * e1 * lq1[i]);
      gq2[i] -= static_cast<float>(dl * e2 * lk2[i]);
      gk2[i] -= static_cast<float>(dl * e2 * lq2[i]);
    }
  }

  void attention_forward(const kernels::AttentionDims& dims, DevicePtr<const float> q, DevicePtr<const float> k,
                         DevicePtr<const float> v, DevicePtr<const float> lambda, DevicePtr<float> out,
                         DeviceAttentionSaved saved) override {
    k_.attention_forward(dims, host(q), host(k), host(v), host(lambda), host(out),
                         {host(saved.lse), host(saved.maps_out)});
  }
  void attention_backward(const kernels::AttentionDims& dims, DevicePtr<const float> q, DevicePtr<const float> k,
                          DevicePtr<const float> v, DevicePtr<const float> lambda, DevicePtr<const float> out,
                          DeviceAttentionSaved saved, DevicePtr<const float> dout, DevicePtr<float> dq,
                          DevicePtr<float> dk, DevicePtr<float> dv, DevicePtr<float> dlambda) override {
    k_.attention_backward(dims, host(q), host(k), host(v), host(lambda), host(out),
                          {host(saved.lse), host(saved.maps_out)}, host(dout), host(dq), host(dk), host(dv),
                          host(dlambda));
  }
  void attention_forward_quantized(const kernels::AttentionDims& dims, DevicePtr<const float> q,
                                   DevicePtr<const float> k, DevicePtr<const float> v, DevicePtr<const float> lambda,
                                   DevicePtr<float> out, int bits) override {
    kernels::attention_forward_quantized(dims, host(q), host(k), host(v), host(lambda), host(out), bits);
  }

  void layernorm_forward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                         DevicePtr<float> y, DevicePtr<float> mean, DevicePtr<float> rstd, int64_t rows, int64_t n,
                         float eps) override {
    k_.layernorm_forward(host(x), host(w), host(b), host(y), host(mean), host(rstd), rows, n, eps);
  }
  void layernorm_backward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> mean,
                          DevicePtr<const float> rstd, DevicePtr<const float> dy, DevicePtr<float> dx,
                          DevicePtr<float> dw, DevicePtr<float> db, int64_t rows, int64_t n) override {
    k_.layernorm_backward(host(x), host(w), host(mean), host(rstd), host(dy), host(dx), host(dw), host(db), rows, n);
  }
  void add_bias(DevicePtr<float> y, DevicePtr<const float> bias, int64_t rows, int64_t cols) override {
    k_.add_bias(host(y), host(bias), rows, cols);
  }
  void mamba_conv_prompt(const kernels::MambaDims& dims, int64_t T, DevicePtr<const float> x, int64_t ld_x,
                         DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> window,
                         DevicePtr<float> u) override {
    k_.mamba_conv_prompt(dims, T, host(x), ld_x, host(w), host(bias), host(window), host(u));
  }
  void mamba_scan_prompt(const kernels::MambaDims& dims, int64_t T, DevicePtr<const float> u,
                         DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias, DevicePtr<const float> a_log,
                         DevicePtr<const float> B, DevicePtr<const float> C, int64_t ld_bc, DevicePtr<const float> D,
                         DevicePtr<float> state, DevicePtr<float> y) override {
    k_.mamba_scan_prompt(dims, T, host(u), host(dt_in), host(dt_bias), host(a_log), host(B), host(C), ld_bc, host(D),
                         host(state), host(y));
  }
  void mamba_conv_step(const kernels::MambaDims& dims, int64_t rows, DevicePtr<const float> x, int64_t ld_x,
                       DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> windows,
                       DevicePtr<const int32_t> slots, DevicePtr<float> u, OptionSpelling) override {
    const std::vector<float*>& each = slot_rows(windows, slots, rows, (dims.conv - 1) * dims.channels);
    k_.mamba_conv_step(dims, rows, host(x), ld_x, host(w), host(bias), each.data(), host(u));
  }
  void mamba_scan_step(const kernels::MambaDims& dims, int64_t rows, DevicePtr<const float> u,
                       DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias, DevicePtr<const float> a_log,
                       DevicePtr<const float> B, DevicePtr<const float> C, int64_t ld_bc, DevicePtr<const float> D,
                       DevicePtr<float> states, DevicePtr<const int32_t> slots, DevicePtr<float> y,
                       OptionSpelling) override {
    const std::vector<float*>& each = slot_rows(states, slots, rows, dims.channels * dims.state);
    k_.mamba_scan_step(dims, rows, host(u), host(dt_in), host(dt_bias), host(a_log), host(B), host(C), ld_bc, host(D),
                       each.data(), host(y));
  }

  void paged_store(const PagedKv& kv, int64_t layer, DevicePtr<const int32_t> slots, int64_t rows,
                   DevicePtr<const float> k, DevicePtr<const float> v) override {
    const kernels::DecodeAttentionDims& a = kv.dims;
    const int32_t* at = host(slots);
    const float *keys = host(k), *values = host(v);
    const int64_t kw = a.k_width(), vw = a.v_width(), P = a.capacity;
    for (int64_t i = 0; i < rows; ++i) {
      DIFFTX_CHECK(at[i] >= 0 && at[i] / P < kv.blocks, "cpu paged_store: row ", i, "'s slot ", at[i],
                   " is outside the pool's ", kv.blocks, " blocks of ", P, " positions");
      unsigned char* block = host(kv.keys(at[i] / P, layer));
      kernels::store_kv(a, block, block + kv.key_bytes, at[i] % P, 1, keys + i * kw, values + i * vw);
    }
  }
  void paged_attention(const PagedKv& kv, int64_t layer, const PagedRows& rows, DevicePtr<const float> q,
                       DevicePtr<const float> lambda, DevicePtr<float> out) override {
    const kernels::DecodeAttentionDims& a = kv.dims;
    const int32_t *lengths = host(rows.lengths), *tables = host(rows.tables), *blocks = host(rows.blocks);
    const int64_t P = a.capacity, qw = a.attention_dims().q_width(), ow = a.out_width();
    const bool per_row_lambda = a.lambda_source() == kernels::LambdaSource::token_logits;
    // Each run of rows of one sequence shares one page list: the blocks its longest row reads,
    // their keys then their values.
    Paging& paging = paging_;
    paging.pages.clear();
    paging.first.clear();
    paging.counts.clear();
    paging.rows.clear();
    const float *queries = host(q), *lambdas = host(lambda);
    float* outs = host(out);
    for (int64_t run = 0; run < rows.count;) {
      // The run's blocks, from the first its rows read (those before a window's start may be given back).
      int64_t end = run, count = 0, read = INT64_MAX;
      for (; end < rows.count && tables[end] == tables[run]; ++end) {
        DIFFTX_CHECK(lengths[end] >= 1 && lengths[end] <= rows.max_length, "cpu paged_attention: row ", end,
                     "'s length ", lengths[end], " is outside [1, ", rows.max_length, "]");
        count = std::max<int64_t>(count, (lengths[end] + P - 1) / P);
        read = std::min(read, a.first_position(lengths[end]) / P);
      }
      const size_t first = paging.pages.size();
      for (int64_t b = 0; b < count; ++b) {  // the keys' pages
        const int32_t block = blocks[tables[run] + b];
        DIFFTX_CHECK(b < read || (block >= 0 && block < kv.blocks), "cpu paged_attention: block entry ",
                     tables[run] + b, " (row ", run, "'s block ", b, ") is ", block, ", outside the pool's ",
                     kv.blocks, " blocks");
        paging.pages.push_back(host(kv.keys(block, layer)));
      }
      for (int64_t b = 0; b < count; ++b)
        paging.pages.push_back(host(kv.keys(blocks[tables[run] + b], layer)) + kv.key_bytes);
      paging.first.push_back(static_cast<int64_t>(first));
      for (int64_t i = run; i < end; ++i)
        paging.rows.push_back({queries + i * qw, lengths[i], kernels::KvPages{nullptr, nullptr},
                               per_row_lambda ? lambdas + i * a.H : lambdas, outs + i * ow});
      paging.counts.push_back(count);
      run = end;
    }
    // The page lists are complete (no more reallocation): point the rows at them.
    for (int64_t i = 0, run = 0; i < rows.count; ++run) {
      const void* const* keys = paging.pages.data() + paging.first[run];
      for (const int32_t table = tables[i]; i < rows.count && tables[i] == table; ++i)
        paging.rows[i].pages = kernels::KvPages{keys, keys + paging.counts[run]};
    }
    k_.decode_attention_rows(a, paging.rows, scratch(a));
  }

  double cross_entropy_forward_backward(DevicePtr<const float> logits, DevicePtr<const int32_t> targets,
                                        DevicePtr<float> dlogits, int64_t rows, int64_t V, int32_t ignore_id,
                                        int64_t* count) override {
    return k_.cross_entropy_forward_backward(host(logits), host(targets), host(dlogits), rows, V, ignore_id, count);
  }
  double cross_entropy_sum(DevicePtr<const float> logits, DevicePtr<const int32_t> targets, int64_t rows, int64_t V,
                           int32_t ignore_id, int64_t* count) override {
    return k_.cross_entropy_sum(host(logits), host(targets), rows, V, ignore_id, count);
  }
  void adamw_update(DevicePtr<float> p, DevicePtr<const float> g, DevicePtr<float> m, DevicePtr<float> v, int64_t n,
                    const kernels::AdamWParams& hp, float grad_scale) override {
    k_.adamw_update(host(p), host(g), host(m), host(v), n, hp, grad_scale);
  }
  double sum_of_squares(DevicePtr<const float> x, int64_t n) override { return k_.sum_of_squares(host(x), n); }

 protected:
  void release(uint64_t address, int64_t) override { std::free(reinterpret_cast<void*>(address)); }

 private:
  static double dot(const float* a, const float* b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
    return s;
  }

  // Row r's part of a pool of parts of `width` floats: base + slots[r] width (the Mamba step's
  // windows and states), in a list kept for the calling thread.
  static const std::vector<float*>& slot_rows(DevicePtr<float> base, DevicePtr<const int32_t> slots, int64_t rows,
                                              int64_t width) {
    thread_local std::vector<float*> each;
    const int32_t* slot = host(slots);
    each.resize(static_cast<size_t>(std::max<int64_t>(rows, 0)));
    for (int64_t r = 0; r < rows; ++r) {
      DIFFTX_CHECK(slot[r] >= 0, "mamba step: row ", r, " has slot ", slot[r], "; slots must be >= 0");
      each[r] = host(base) + slot[r] * width;
    }
    return each;
  }

  // The decode kernel's scratch for the calling thread, planned for these dims.
  static kernels::DecodeAttentionScratch& scratch(const kernels::DecodeAttentionDims& a) {
    thread_local std::unique_ptr<kernels::DecodeAttentionScratch> held;
    thread_local kernels::DecodeAttentionDims planned{};
    if (!held || planned.kind != a.kind || planned.H != a.H || planned.Hkv != a.Hkv || planned.d != a.d ||
        planned.r != a.r) {
      held = std::make_unique<kernels::DecodeAttentionScratch>(a, 0, 1);
      planned = a;
    }
    return *held;
  }

  // paged_attention's row list, kept between calls (the engine's thread).
  struct Paging {
    std::vector<const void*> pages;
    std::vector<int64_t> first, counts;  // per run of rows
    std::vector<kernels::DecodeAttentionRow> rows;
  };
  static thread_local Paging paging_;

  CpuLevel level_;
  const CpuKernels& k_;
  DeviceInfo info_;
};

thread_local CpuBackend::Paging CpuBackend::paging_;

}  // namespace

Backend& level_backend(CpuLevel level) {
  static std::vector<std::unique_ptr<CpuBackend>> backends = [] {
    std::vector<std::unique_ptr<CpuBackend>> all;
    for (CpuLevel l : cpu_levels_built()) all.push_back(std::make_unique<CpuBackend>(l, kernels(l)));
    return all;
  }();
  DIFFTX_CHECK(cpu_runs(level), "this CPU cannot run level '", cpu_level_name(level), "'");
  const std::vector<CpuLevel>& built = cpu_levels_built();
  for (size_t i = 0; i < built.size(); ++i)
    if (built[i] == level) return *backends[i];
  fail("CPU level '", cpu_level_name(level), "' is not compiled into this binary");
}

}  // namespace difftx::backends::cpu
