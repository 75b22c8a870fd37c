// The Vulkan backend: difftx's inference ops as GLSL compute shaders on any Vulkan 1.1 device
// (NVIDIA, AMD, Intel, Apple through MoltenVK; Mesa's lavapipe on a CPU, which is how CI tests
// every shader). Memory is the device's; each op binds the ranges it reads and writes (split
// into windows where they exceed one storage-buffer binding) and records one or more dispatches
// into the stream. Training ops are not here: they name themselves and the device in an error.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/context.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipelines.h"
#include "backends/vulkan/stream.h"

namespace difftx::backends::vulkan {

class VulkanBackend final : public Backend {
 public:
  // index: the device's place in list_devices(), or -1 for the best one (Context).
  explicit VulkanBackend(int index = -1, const Options& options = {});
  ~VulkanBackend() override;

  const DeviceInfo& info() const override { return context_->info(); }
  bool host_memory() const override { return false; }

  DeviceBuffer allocate(int64_t bytes, bool zero_fill = true) override;
  void upload(DevicePtr<void> dst, const void* src, int64_t bytes) override;
  void download(void* dst, DevicePtr<const void> src, int64_t bytes) override;
  void copy(DevicePtr<void> dst, DevicePtr<const void> src, int64_t bytes) override;
  void synchronize() override;

  void zero(DevicePtr<void> dst, int64_t bytes) override;  // at any alignment
  bool trains() const override { return false; }
  // The cooperative-matrix GEMM's F16 inputs (ops_matmul.cpp).
  MatmulInputRounding matmul_input_rounding(kernels::WeightType type) const override;
  bool runs_hybrid() const override { return true; }  // forward only: layernorm_backward is training's
  int64_t max_paged_kv_regions(int64_t layer_bytes) const override;
  int64_t max_bound_rows(int64_t row_bytes) const override { return rows_per_binding(row_bytes, "a pool's row"); }

  PreparedMatrix prepare_matrix(const DeviceMatrix& stored, bool release_stored, bool looked_up) override;
  void matmul(const DeviceMatrix& W, DevicePtr<const float> x, DevicePtr<float> y, int64_t N, bool accumulate,
              kernels::MatmulOrder order) override;
  void gemm(kernels::Trans ta, kernels::Trans tb, int64_t M, int64_t N, int64_t K, float alpha,
            DevicePtr<const float> A, DevicePtr<const float> B, float beta, DevicePtr<float> C) override;
  void embed(const DeviceMatrix& E, DevicePtr<const int32_t> tokens, DevicePtr<float> out, int64_t N) override;
  void embedding_backward(DevicePtr<const int32_t> ids, DevicePtr<const float> dy, DevicePtr<float> dtable,
                          int64_t rows, int64_t n) override;

  void rmsnorm_forward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<float> y, DevicePtr<float> rstd,
                       int64_t rows, int64_t n, float eps) override;
  void rmsnorm_backward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<const float> rstd,
                        DevicePtr<const float> dy, DevicePtr<float> dx, DevicePtr<float> dg, int64_t rows,
                        int64_t n) override;
  void rope(const DeviceRope& table, kernels::RopeStyle style, DevicePtr<float> x, int64_t heads,
            const RopePositions& at, bool inverse) override;
  void swiglu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<float> h, int64_t n) override;
  void swiglu_backward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> dh,
                       DevicePtr<float> dg, DevicePtr<float> du, int64_t n) override;
  void polynorm_glu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                            DevicePtr<const float> b, DevicePtr<float> h, int64_t rows, int64_t F) override;
  void polynorm_glu_backward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                             DevicePtr<const float> b, DevicePtr<const float> dh, DevicePtr<float> dg,
                             DevicePtr<float> du, DevicePtr<float> dw, DevicePtr<float> db, int64_t rows,
                             int64_t F) override;
  void add(DevicePtr<float> y, DevicePtr<const float> x, int64_t n) override;
  void scale(DevicePtr<float> y, DevicePtr<const float> x, float s, int64_t n) override;
  void gather_rows(DevicePtr<const float> src, DevicePtr<const int32_t> rows, int64_t count, int64_t width,
                   DevicePtr<float> dst) override;

  void diff_lambda(DevicePtr<const float> lq1, DevicePtr<const float> lk1, DevicePtr<const float> lq2,
                   DevicePtr<const float> lk2, int64_t d, double lambda_init, DevicePtr<float> out) override;
  void diff_lambda_backward(DevicePtr<const float> lq1, DevicePtr<const float> lk1, DevicePtr<const float> lq2,
                            DevicePtr<const float> lk2, int64_t d, DevicePtr<const float> dlambda,
                            DevicePtr<float> glq1, DevicePtr<float> glk1, DevicePtr<float> glq2,
                            DevicePtr<float> glk2) override;

  void attention_forward(const kernels::AttentionDims& dims, DevicePtr<const float> q, DevicePtr<const float> k,
                         DevicePtr<const float> v, DevicePtr<const float> lambda, DevicePtr<float> out,
                         DeviceAttentionSaved saved) override;
  void attention_backward(const kernels::AttentionDims& dims, DevicePtr<const float> q, DevicePtr<const float> k,
                          DevicePtr<const float> v, DevicePtr<const float> lambda, DevicePtr<const float> out,
                          DeviceAttentionSaved saved, DevicePtr<const float> dout, DevicePtr<float> dq,
                          DevicePtr<float> dk, DevicePtr<float> dv, DevicePtr<float> dlambda) override;
  void attention_forward_quantized(const kernels::AttentionDims& dims, DevicePtr<const float> q,
                                   DevicePtr<const float> k, DevicePtr<const float> v, DevicePtr<const float> lambda,
                                   DevicePtr<float> out, int bits) override;

  void paged_store(const PagedKv& kv, int64_t layer, DevicePtr<const int32_t> slots, int64_t rows,
                   DevicePtr<const float> k, DevicePtr<const float> v) override;
  void paged_attention(const PagedKv& kv, int64_t layer, const PagedRows& rows, DevicePtr<const float> q,
                       DevicePtr<const float> lambda, DevicePtr<float> out) override;

  double cross_entropy_forward_backward(DevicePtr<const float> logits, DevicePtr<const int32_t> targets,
                                        DevicePtr<float> dlogits, int64_t rows, int64_t V, int32_t ignore_id,
                                        int64_t* count) override;
  double cross_entropy_sum(DevicePtr<const float> logits, DevicePtr<const int32_t> targets, int64_t rows, int64_t V,
                           int32_t ignore_id, int64_t* count) override;
  void adamw_update(DevicePtr<float> p, DevicePtr<const float> g, DevicePtr<float> m, DevicePtr<float> v, int64_t n,
                    const kernels::AdamWParams& hp, float grad_scale) override;
  double sum_of_squares(DevicePtr<const float> x, int64_t n) override;

  // A hybrid stack's ops (ops_hybrid.cpp); layernorm_backward names itself and the device in an error.
  void layernorm_forward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                         DevicePtr<float> y, DevicePtr<float> mean, DevicePtr<float> rstd, int64_t rows, int64_t n,
                         float eps) override;
  void layernorm_backward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> mean,
                          DevicePtr<const float> rstd, DevicePtr<const float> dy, DevicePtr<float> dx,
                          DevicePtr<float> dw, DevicePtr<float> db, int64_t rows, int64_t n) override;
  void add_bias(DevicePtr<float> y, DevicePtr<const float> bias, int64_t rows, int64_t cols) override;
  void mamba_conv_prompt(const kernels::MambaDims& dims, int64_t T, DevicePtr<const float> x, int64_t ld_x,
                         DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> window,
                         DevicePtr<float> u) override;
  void mamba_scan_prompt(const kernels::MambaDims& dims, int64_t T, DevicePtr<const float> u,
                         DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias, DevicePtr<const float> a_log,
                         DevicePtr<const float> B, DevicePtr<const float> C, int64_t ld_bc, DevicePtr<const float> D,
                         DevicePtr<float> state, DevicePtr<float> y) override;
  void mamba_conv_step(const kernels::MambaDims& dims, int64_t rows, DevicePtr<const float> x, int64_t ld_x,
                       DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> windows,
                       DevicePtr<const int32_t> slots, DevicePtr<float> u, OptionSpelling spelling) override;
  void mamba_scan_step(const kernels::MambaDims& dims, int64_t rows, DevicePtr<const float> u,
                       DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias, DevicePtr<const float> a_log,
                       DevicePtr<const float> B, DevicePtr<const float> C, int64_t ld_bc, DevicePtr<const float> D,
                       DevicePtr<float> states, DevicePtr<const int32_t> slots, DevicePtr<float> y,
                       OptionSpelling spelling) override;

  // Finishes the work, saves the pipeline cache, destroys everything made on the device and the
  // device; again, nothing. Called at the process's exit (and by the destructor): after it, the
  // backend frees nothing, and every op (of any thread) is an error saying it was closed. Where
  // the work did not finish (a timeout, a lost device, a failed submit), nothing is destroyed
  // or waited for: the process's exit reclaims it.
  void close();

  // Vulkan's own: what the device is and does, for tests and --version.
  const Context& context() const { return *context_; }
  std::vector<std::string> validation_messages() const { return context_->validation_messages(); }
  bool cooperative_matrix() const { return context_->caps().cooperative_matrix; }
  // The GEMM of prompt rows for the types other than F32: plain F32 tiles (matmul_gemm.comp), or
  // F16 products on cooperative matrices (matmul_coopmat.comp), real or emulated.
  enum class PrefillGemm { plain, cooperative_matrix, emulated };
  PrefillGemm prefill_gemm() const {
    const Capabilities& caps = context_->caps();
    return caps.cooperative_matrix            ? PrefillGemm::cooperative_matrix
           : caps.emulated_cooperative_matrix ? PrefillGemm::emulated
                                              : PrefillGemm::plain;
  }
  int64_t pipelines_created() const { return pipelines_.created(); }
  int64_t free_bytes() const { return memory_.free_bytes(); }
  // The device's own time for the work `record` issues, in ms (benchmarks).
  double device_milliseconds(const std::function<void()>& record);

  // How ops bind memory (public for the op files' helpers; not for callers).
  struct Bound {
    VkDescriptorBufferInfo info;
    uint32_t delta;  // bytes from the binding's start to the address
    uint32_t words() const { return delta / 4; }
  };

 protected:
  void release(uint64_t address, int64_t bytes) override;

 private:
  // [address, address + bytes) as one binding (aligned down to minStorageBufferOffsetAlignment).
  // Error naming `what` when the address is null, the range is not this device's memory, exceeds
  // one binding, or (words) is not 4-byte aligned.
  Bound bind(uint64_t address, int64_t bytes, const char* what, bool words = true);
  // An operand the shader reads only where its push constants say so: null binds a small dummy.
  Bound bind_optional(uint64_t address, int64_t bytes, const char* what, bool words = true);
  // Rows that fit one binding at row_bytes a row (at least 1, else an error naming what).
  int64_t rows_per_binding(int64_t row_bytes, const char* what) const;
  // One dispatch of `groups` workgroups (spread over x and y beyond one dimension's limit).
  using Buffers = std::vector<VkDescriptorBufferInfo>;
  void run(std::string_view shader, std::vector<uint32_t> descriptors, const Buffers& buffers, const void* push,
           uint32_t push_bytes, int64_t groups);
  void run2d(std::string_view shader, std::vector<uint32_t> descriptors, const Buffers& buffers, const void* push,
             uint32_t push_bytes, int64_t groups_x, int64_t groups_y);
  void elementwise(std::string_view op, DevicePtr<float> y, DevicePtr<const float> a, DevicePtr<const float> b,
                   float s, int64_t n);
  // The KV pool as KV_WINDOWS bindings (shaders/kv.glsl): its descriptors and push fields.
  struct KvWindows {
    std::vector<VkDescriptorBufferInfo> windows;
    uint32_t per_window = 0, delta = 0;
  };
  KvWindows bind_kv(const PagedKv& kv, const char* what);
  // A pool of Mamba windows or states of `width` floats each, from base to its allocation's end
  // (count of them; an error if one binding cannot hold them all, naming the options that sized
  // it as `spelling` writes them), for the step forms' slots.
  struct SlotPool {
    Bound bound;
    uint32_t count = 0;
  };
  SlotPool bind_slots(DevicePtr<const void> base, int64_t width, const char* what, OptionSpelling spelling);
  // One dispatch of mamba_conv.comp or mamba_scan.comp: `rows` sequences of T tokens (the prompt
  // form: rows = 1, no slots; the step form: T = 1, row r's window or state at slots[r]).
  void mamba_conv(const kernels::MambaDims& dims, int64_t rows, int64_t T, DevicePtr<const float> x, int64_t ld_x,
                  DevicePtr<const float> w, DevicePtr<const float> bias, const SlotPool& windows,
                  DevicePtr<const int32_t> slots, DevicePtr<float> u);
  void mamba_scan(const kernels::MambaDims& dims, int64_t rows, int64_t T, DevicePtr<const float> u,
                  DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias, DevicePtr<const float> a_log,
                  DevicePtr<const float> B, DevicePtr<const float> C, int64_t ld_bc, DevicePtr<const float> D,
                  const SlotPool& states, DevicePtr<const int32_t> slots, DevicePtr<float> y);
  [[noreturn]] void not_here(const char* op, const char* why) const;
  // Device memory an op keeps between calls for its intermediate results, grown to `bytes` when
  // smaller (the caller holds mutex_ while it uses the memory): its address.
  struct Scratch {
    uint64_t address = 0;
    int64_t bytes = 0;
  };
  uint64_t grown(Scratch& scratch, int64_t bytes);

  std::unique_ptr<Context> context_;
  Memory memory_;
  Pipelines pipelines_;
  Stream stream_;
  std::recursive_mutex mutex_;
  uint64_t dummy_ = 0;                                 // 256 bytes bound for a null pointer
  Scratch attention_parts_;                            // paged attention's partial results
  Scratch matmul_slices_;                              // split-K's partial sums
};

}  // namespace difftx::backends::vulkan
