// A compute device as one object: its memory and its op table (docs/ARCHITECTURE.md "Backends").
// The model, the engine, the KV pool and the trainer allocate and compute only through a
// Backend; they hold device addresses (device_ptr.h) and never read device memory on the host
// except through download(). Every op's semantics are the CPU kernels' (kernels/), and every
// backend is tested against the same double-precision references (tests/backends/).
//
// Ops are issued in order and may run asynchronously: each op sees the results of the ops issued
// before it; download() and synchronize() wait for everything issued. Shapes are in elements;
// matrices are row-major. Backward ops OVERWRITE input gradients and ACCUMULATE (+=) parameter
// gradients, as the kernels do (kernels/ops.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/device_ptr.h"
#include "core/option_name.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/decode_attention.h"
#include "kernels/gemm.h"
#include "kernels/mamba.h"
#include "kernels/ops.h"
#include "kernels/quant/matmul.h"

namespace difftx::backends {

class Backend;

// One allocation on a device, given back when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend* owner, uint64_t address, int64_t bytes) : owner_(owner), address_(address), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  template <typename T>
  DevicePtr<T> as() const {
    return DevicePtr<T>::at(address_);
  }
  int64_t bytes() const { return bytes_; }
  explicit operator bool() const { return address_ != 0; }

 private:
  Backend* owner_ = nullptr;
  uint64_t address_ = 0;
  int64_t bytes_ = 0;
};

// A weight matrix in device memory, [rows, cols] = [out, in], y = x W^T (docs/SPEC.md §1), rows
// stored one after another in `type` (kernels/quant/weight_type.h). panels: the backend's own
// repacking of the same weights for its products (the CPU's GEMM panels), or null.
struct DeviceMatrix {
  kernels::WeightType type = kernels::WeightType::f32;
  DevicePtr<const void> data;
  int64_t rows = 0, cols = 0;
  DevicePtr<const void> panels;
};

// A matrix in host memory in the kernels' terms (kernels/quant/matmul.h): an error for one held
// by a device the host cannot read.
inline kernels::WeightMatrix host_matrix(const DeviceMatrix& m) {
  return {m.type, m.data.host(), m.rows, m.cols, m.panels.host()};
}

// A matrix in the backend's form and the memory that holds that form.
struct PreparedMatrix {
  DeviceMatrix matrix;
  DeviceBuffer storage;
};

// RoPE's cos/sin tables [max_T, d/2] in device memory (kernels/ops.h RopeTable).
struct DeviceRope {
  int64_t max_T = 0, d = 0;
  DevicePtr<const float> cos, sin;
};

// Where the rows of a RoPE call are: token t of sequence b at position pos0 + t, or row i at
// positions[i] (B = 1, T = rows).
struct RopePositions {
  int64_t B = 1, T = 0, pos0 = 0;
  DevicePtr<const int64_t> positions;
};

// What attention_forward keeps for attention_backward (kernels/attention/attention.h).
struct DeviceAttentionSaved {
  DevicePtr<float> lse, maps_out;
};

// The engine's paged KV cache (infer/kv_pool.h): blocks of dims.capacity positions, each block
// holding every layer's keys then values in decode_attention.h's layout.
struct PagedKv {
  kernels::DecodeAttentionDims dims;     // one block's layout: capacity = tokens per block
  DevicePtr<unsigned char> base;
  int64_t layers = 0;
  int64_t layer_bytes = 0;      // one layer's keys and values in one block
  int64_t key_bytes = 0;        // one layer's keys (its values follow)
  int64_t blocks = 0;           // blocks in the pool (the paged ops' slots and block entries lie below)
  OptionSpelling spelling = OptionSpelling::field;  // how an error names the options that sized the pool
  DevicePtr<unsigned char> keys(int64_t block, int64_t layer) const {
    return base + (block * layers + layer) * layer_bytes;
  }
};

// The rows of an engine step, as paged attention reads them: row i attends to the first
// lengths[i] positions of the sequence whose blocks are blocks[tables[i] ...] (position p in
// block blocks[tables[i] + p / capacity]). max_length: the largest length (host-side, for
// planning the launch).
struct PagedRows {
  int64_t count = 0;
  int64_t max_length = 0;
  DevicePtr<const int32_t> lengths;
  DevicePtr<const int32_t> tables;
  DevicePtr<const int32_t> blocks;
  // The most rows of one sequence at consecutive positions, one after another (a prompt chunk,
  // draft verification rows): a backend that attends such rows together sizes its groups by it.
  // Only a hint: the results do not depend on it.
  int64_t longest_run = 1;
};

struct DeviceInfo {
  std::string name;         // "cpu (avx512)", "llvmpipe (LLVM 15.0.6, 256 bits)"
  int64_t memory_bytes = 0; // the device's memory (the CPU's: physical RAM)
  std::string features;     // one line, for --version
};

// How a matmul may round its products' inputs, in any order: each x, and each weight once widened,
// enters its product as v' with |v' - v| <= relative |v| + absolute, or as 0 where |v| is below
// flushed_below (a device that flushes F16 subnormals). All 0 where they are used in f32 as they
// are. A sum takes terms_per_column products a column (x in parts: one per part),
// each step rounding by at most step_rounding of the running sum's magnitude (2^-24 to nearest;
// tensor cores may truncate).
struct InputRounding {
  double relative = 0, absolute = 0, flushed_below = 0;
  double error(double magnitude) const {  // the most v' may be off v, for |v| = magnitude
    const double rounded = relative * magnitude + absolute;
    return magnitude < flushed_below ? std::max(rounded, magnitude) : rounded;
  }
};
struct MatmulInputRounding {
  InputRounding x, w;
  int64_t terms_per_column = 1;
  double step_rounding = 0x1p-24;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& info() const = 0;
  // Whether the host reads this device's memory directly (DevicePtr::host()): the CPU's.
  virtual bool host_memory() const = 0;
  // The rounding a matmul of weights of `type` may apply to its products' inputs (none here: a
  // device that multiplies in fp16 says how much).
  virtual MatmulInputRounding matmul_input_rounding(kernels::WeightType type) const { return {}; }
  // Whether the training ops run here (training's dense gemm, the backward ops, cross-entropy's
  // gradient, AdamW, sum of squares) and the analyses' fake-quantized attention; elsewhere they
  // are errors naming the op and the device.
  virtual bool trains() const = 0;
  // Whether a hybrid stack's ops run here (LayerNorm with a bias, add_bias, Mamba, the GMU);
  // elsewhere they are errors naming the op and the device.
  virtual bool runs_hybrid() const = 0;
  // The most items of the engine's pools the ops here take, so that it sizes its pools within
  // them at the start (a Vulkan op binds at most maxStorageBufferRange bytes at once): (block,
  // layer) regions of layer_bytes in a paged KV pool (PagedKv), and rows of row_bytes one op
  // binds whole (a hybrid's state slots). The CPU: no limit.
  virtual int64_t max_paged_kv_regions(int64_t layer_bytes) const { return INT64_MAX; }
  virtual int64_t max_bound_rows(int64_t row_bytes) const { return INT64_MAX; }

  // ---- Memory. allocate() gives zeroed memory (zero_fill = false: contents unspecified, for
  // memory that is written before it is read, such as the KV cache, whose pages a CPU then
  // touches only as they are used); an allocation that does not fit is an error naming the
  // bytes asked and free.
  virtual DeviceBuffer allocate(int64_t bytes, bool zero_fill = true) = 0;
  virtual void upload(DevicePtr<void> dst, const void* src, int64_t bytes) = 0;
  virtual void download(void* dst, DevicePtr<const void> src, int64_t bytes) = 0;
  virtual void copy(DevicePtr<void> dst, DevicePtr<const void> src, int64_t bytes) = 0;
  virtual void zero(DevicePtr<void> dst, int64_t bytes) = 0;
  virtual void synchronize() = 0;

  // ---- Weights. The backend's own form of a matrix for its products (the CPU's GEMM panels),
  // built once after the stored bytes are in place. release_stored: give the stored bytes back
  // where the prepared form holds all the matrix (then matrix.data is null); looked_up: the
  // matrix is also an embedding table, whose rows embed() must still read.
  virtual PreparedMatrix prepare_matrix(const DeviceMatrix& stored, bool release_stored, bool looked_up) = 0;

  // ---- Products. y[N, W.rows] (= or +=) x[N, W.cols] W^T, each row of y in `order`'s bits
  // (kernels/quant/matmul.h MatmulOrder).
  virtual void matmul(const DeviceMatrix& W, DevicePtr<const float> x, DevicePtr<float> y, int64_t N, bool accumulate,
                      kernels::MatmulOrder order) = 0;
  // C[M,N] = alpha op(A)[M,K] op(B)[K,N] + beta C, dense F32 (training's backward).
  virtual void gemm(kernels::Trans ta, kernels::Trans tb, int64_t M, int64_t N, int64_t K, float alpha,
                    DevicePtr<const float> A, DevicePtr<const float> B, float beta, DevicePtr<float> C) = 0;
  // out[N, E.cols] = rows tokens[i] of E widened to F32. The caller has checked the ids.
  virtual void embed(const DeviceMatrix& E, DevicePtr<const int32_t> tokens, DevicePtr<float> out, int64_t N) = 0;
  // dtable[ids[i]] += dy[i] (training).
  virtual void embedding_backward(DevicePtr<const int32_t> ids, DevicePtr<const float> dy, DevicePtr<float> dtable,
                                  int64_t rows, int64_t n) = 0;

  // ---- Row-wise and element-wise ops (kernels/ops.h, kernels/polynorm.h).
  virtual void rmsnorm_forward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<float> y,
                               DevicePtr<float> rstd, int64_t rows, int64_t n, float eps) = 0;
  virtual void rmsnorm_backward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<const float> rstd,
                                DevicePtr<const float> dy, DevicePtr<float> dx, DevicePtr<float> dg, int64_t rows,
                                int64_t n) = 0;
  // In place on x [rows, heads * d]; inverse: the backward (rotation by the negative angle).
  virtual void rope(const DeviceRope& table, kernels::RopeStyle style, DevicePtr<float> x, int64_t heads,
                    const RopePositions& at, bool inverse) = 0;
  virtual void swiglu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<float> h, int64_t n) = 0;
  virtual void swiglu_backward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> dh,
                               DevicePtr<float> dg, DevicePtr<float> du, int64_t n) = 0;
  virtual void polynorm_glu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                                    DevicePtr<const float> b, DevicePtr<float> h, int64_t rows, int64_t F) = 0;
  virtual void polynorm_glu_backward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                                     DevicePtr<const float> b, DevicePtr<const float> dh, DevicePtr<float> dg,
                                     DevicePtr<float> du, DevicePtr<float> dw, DevicePtr<float> db, int64_t rows,
                                     int64_t F) = 0;
  virtual void add(DevicePtr<float> y, DevicePtr<const float> x, int64_t n) = 0;            // y += x
  virtual void scale(DevicePtr<float> y, DevicePtr<const float> x, float s, int64_t n) = 0;  // y = s x
  // dst[i] = src[rows[i]] for `count` rows of `width` floats.
  virtual void gather_rows(DevicePtr<const float> src, DevicePtr<const int32_t> rows, int64_t count, int64_t width,
                           DevicePtr<float> dst) = 0;

  // ---- DIFF's lambda (docs/SPEC.md §2.2 Eq. 2): out[0] = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init, dots
  // over d, in double; the backward accumulates d lambda * d lambda / d (lq1, lk1, lq2, lk2).
  virtual void diff_lambda(DevicePtr<const float> lq1, DevicePtr<const float> lk1, DevicePtr<const float> lq2,
                           DevicePtr<const float> lk2, int64_t d, double lambda_init, DevicePtr<float> out) = 0;
  virtual void diff_lambda_backward(DevicePtr<const float> lq1, DevicePtr<const float> lk1,
                                    DevicePtr<const float> lq2, DevicePtr<const float> lk2, int64_t d,
                                    DevicePtr<const float> dlambda, DevicePtr<float> glq1, DevicePtr<float> glk1,
                                    DevicePtr<float> glq2, DevicePtr<float> glk2) = 0;

  // ---- Attention over a batch's own keys and values (kernels/attention/attention.h); lambda
  // as the kernels take it (variant.h), in device memory. dims.window > 0: a sliding window,
  // which the forward takes and the backward and the fake-quantized forward refuse by name.
  virtual void attention_forward(const kernels::AttentionDims& dims, DevicePtr<const float> q, DevicePtr<const float> k,
                                 DevicePtr<const float> v, DevicePtr<const float> lambda, DevicePtr<float> out,
                                 DeviceAttentionSaved saved) = 0;
  virtual void attention_backward(const kernels::AttentionDims& dims, DevicePtr<const float> q,
                                  DevicePtr<const float> k, DevicePtr<const float> v, DevicePtr<const float> lambda,
                                  DevicePtr<const float> out, DeviceAttentionSaved saved, DevicePtr<const float> dout,
                                  DevicePtr<float> dq, DevicePtr<float> dk, DevicePtr<float> dv,
                                  DevicePtr<float> dlambda) = 0;
  // The paper's fake-quantized attention logits (attention_quantized.h), for analyses.
  virtual void attention_forward_quantized(const kernels::AttentionDims& dims, DevicePtr<const float> q,
                                           DevicePtr<const float> k, DevicePtr<const float> v,
                                           DevicePtr<const float> lambda, DevicePtr<float> out, int bits) = 0;

  // ---- A hybrid stack's ops (Phi-4-mini-flash's SambaY, docs/MODEL.md; kernels/layernorm.h,
  // bias.h, mamba.h). LayerNorm with a bias per row of width n, mean and rstd [rows] kept for
  // the backward (training).
  virtual void layernorm_forward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                                 DevicePtr<float> y, DevicePtr<float> mean, DevicePtr<float> rstd, int64_t rows,
                                 int64_t n, float eps) = 0;
  virtual void layernorm_backward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> mean,
                                  DevicePtr<const float> rstd, DevicePtr<const float> dy, DevicePtr<float> dx,
                                  DevicePtr<float> dw, DevicePtr<float> db, int64_t rows, int64_t n) = 0;
  // y[r, c] += bias[c] over rows of width cols (a biased projection's bias).
  virtual void add_bias(DevicePtr<float> y, DevicePtr<const float> bias, int64_t rows, int64_t cols) = 0;
  // Mamba-1's conv and selective scan over T tokens of one sequence, its conv window [K - 1, E] and
  // SSM state [E, S] read and advanced.
  virtual void mamba_conv_prompt(const kernels::MambaDims& dims, int64_t T, DevicePtr<const float> x, int64_t ld_x,
                                 DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> window,
                                 DevicePtr<float> u) = 0;
  virtual void mamba_scan_prompt(const kernels::MambaDims& dims, int64_t T, DevicePtr<const float> u,
                                 DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias,
                                 DevicePtr<const float> a_log, DevicePtr<const float> B, DevicePtr<const float> C,
                                 int64_t ld_bc, DevicePtr<const float> D, DevicePtr<float> state,
                                 DevicePtr<float> y) = 0;
  // One token of each of `rows` sequences (a decode step, the same bits as the prompt form): row r's
  // window is windows + slots[r] (K - 1) E and its state states + slots[r] E S. Each pool runs to
  // the end of its allocation, which a device may bind whole (infer/state_pool.h); one it cannot
  // is an error naming the options that sized the pool as `spelling` writes them.
  virtual void mamba_conv_step(const kernels::MambaDims& dims, int64_t rows, DevicePtr<const float> x, int64_t ld_x,
                               DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> windows,
                               DevicePtr<const int32_t> slots, DevicePtr<float> u, OptionSpelling spelling) = 0;
  virtual void mamba_scan_step(const kernels::MambaDims& dims, int64_t rows, DevicePtr<const float> u,
                               DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias,
                               DevicePtr<const float> a_log, DevicePtr<const float> B, DevicePtr<const float> C,
                               int64_t ld_bc, DevicePtr<const float> D, DevicePtr<float> states,
                               DevicePtr<const int32_t> slots, DevicePtr<float> y, OptionSpelling spelling) = 0;
  // The Gated Memory Unit: out[rows, D] (= or +=) out_proj(memory * silu(in_proj(x))), x [rows, D],
  // memory [rows, E], in_proj [E, D] and out_proj [D, E]; gate [rows, E] is scratch. Composed of
  // matmul and swiglu_forward here; a device may fuse it.
  virtual void gmu_forward(const DeviceMatrix& in_proj, const DeviceMatrix& out_proj, DevicePtr<const float> x,
                           DevicePtr<const float> memory, DevicePtr<float> gate, DevicePtr<float> out, int64_t rows,
                           bool accumulate, kernels::MatmulOrder order);

  // ---- The paged KV cache. store: row i's keys k[i] [Hkv * key_width] and values v[i] into
  // position slots[i] % capacity of block slots[i] / capacity, converted to the cache's storage.
  // A slot outside [0, kv.blocks * capacity), or a block entry a row reads outside [0, kv.blocks),
  // is an error naming it where the backend reads them on the host (CPU); a device, which cannot
  // see them, never writes such a slot and reads block 0 for such an entry (the row's output is
  // then meaningless).
  virtual void paged_store(const PagedKv& kv, int64_t layer, DevicePtr<const int32_t> slots, int64_t rows,
                           DevicePtr<const float> k, DevicePtr<const float> v) = 0;
  // Every row's single-query attention over its cached positions (decode_attention.h), each row's
  // bits independent of the other rows; lambda: the layer's scalar, or [rows, H] logits (diff2).
  // kv.dims.window > 0: each row attends to its last window positions only and reads no block
  // before them (blocks[] there may name blocks given back). A length outside [1, rows.max_length]
  // is an error naming the row on the CPU; a device writes that row as NaN.
  virtual void paged_attention(const PagedKv& kv, int64_t layer, const PagedRows& rows, DevicePtr<const float> q,
                               DevicePtr<const float> lambda, DevicePtr<float> out) = 0;

  // ---- Training. Cross-entropy of logits [rows, V] (kernels/ops.h): the mean loss and count,
  // dlogits (may alias logits); or the summed loss alone.
  virtual double cross_entropy_forward_backward(DevicePtr<const float> logits, DevicePtr<const int32_t> targets,
                                                DevicePtr<float> dlogits, int64_t rows, int64_t V, int32_t ignore_id,
                                                int64_t* count) = 0;
  virtual double cross_entropy_sum(DevicePtr<const float> logits, DevicePtr<const int32_t> targets, int64_t rows,
                                   int64_t V, int32_t ignore_id, int64_t* count) = 0;
  virtual void adamw_update(DevicePtr<float> p, DevicePtr<const float> g, DevicePtr<float> m, DevicePtr<float> v,
                            int64_t n, const kernels::AdamWParams& hp, float grad_scale) = 0;
  virtual double sum_of_squares(DevicePtr<const float> x, int64_t n) = 0;

 protected:
  friend class DeviceBuffer;
  virtual void release(uint64_t address, int64_t bytes) = 0;  // DeviceBuffer's destructor
};

// The backend a device name opens: "cpu" (the CPU level in use, kernels/cpu_level.h), "vulkan"
// or "vulkan:N" (registry.cpp). Opened once and kept for the process; an unknown name or a
// device that is not there is an error naming what is.
Backend& open_backend(const std::string& device);
// The CPU backend of the level in use.
Backend& cpu_backend();
// Every device this machine has, by the names open_backend takes ("cpu" first).
std::vector<std::string> device_names();

// RoPE's table for positions [0, max_T) built on the host with the CPU level's kernel (the same
// bits on every device) and placed on `backend`.
struct RopeTableBuffer {
  DeviceBuffer storage;
  DeviceRope table;
};
RopeTableBuffer make_rope_table(Backend& backend, int64_t max_T, int64_t d, double theta,
                                const kernels::RopeScaling& scaling);

}  // namespace difftx::backends
