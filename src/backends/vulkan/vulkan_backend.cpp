#include "backends/vulkan/vulkan_backend.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

// The backends alive in this process. A driver may tear itself down in its own exit handlers
// (NVIDIA's does), after which destroying a device crashes, and so may leaving it undestroyed.
// So at exit, in a handler registered after the device was created (atexit runs handlers in
// reverse order, so this one runs before the driver's), every live backend is closed: its work
// finished, its pipeline cache saved, its objects and device destroyed. A static object that
// frees device memory later finds the backend closed and does nothing.
struct Live {
  std::mutex mutex;
  std::set<VulkanBackend*> backends;
};

Live& live() {
  static Live& live = *new Live;  // never destroyed: the exit handler may run after static destructors
  return live;
}

void close_at_exit() {
  Live& l = live();
  std::lock_guard lock(l.mutex);
  for (VulkanBackend* backend : l.backends) backend->close();
}

}  // namespace

VulkanBackend::VulkanBackend(int index, const Options& options)
    : context_(std::make_unique<Context>(index, options)),
      memory_(*context_),
      pipelines_(*context_),
      stream_(*context_, memory_) {
  dummy_ = memory_.allocate(256);
  stream_.fill_zero(memory_.resolve(dummy_, 256, "dummy").buffer, 0, 256);
  Live& l = live();
  std::lock_guard lock(l.mutex);
  // Registered again with each backend: the driver may have been loaded again since the last.
  std::atexit(close_at_exit);
  l.backends.insert(this);
}

VulkanBackend::~VulkanBackend() {
  {
    Live& l = live();
    std::lock_guard lock(l.mutex);
    l.backends.erase(this);
  }
  close();
}

void VulkanBackend::close() {
  std::lock_guard lock(mutex_);
  if (context_->closed()) return;
  stream_.close();  // waits for the work in flight
  // A stream that failed may still have work running on all of it, or a device that never
  // finishes: nothing more is destroyed, nor waited for, and the process's exit reclaims it.
  const bool abandon = !stream_.usable();
  if (!abandon) {
    pipelines_.close();
    memory_.close();
  }
  context_->close(abandon);
}

void VulkanBackend::not_here(const char* op, const char* why) const {
  fail("vulkan backend (", info().name, "): ", op, " does not run on this device: ", why);
}

// ---- Memory.

DeviceBuffer VulkanBackend::allocate(int64_t bytes, bool zero_fill) {
  DIFFTX_CHECK(bytes >= 0, "vulkan: cannot allocate ", bytes, " bytes");
  if (bytes == 0) return {};  // as on every backend: an empty buffer, no device memory
  std::lock_guard lock(mutex_);
  stream_.check_usable();
  const uint64_t address = memory_.allocate(bytes);
  if (zero_fill) {
    const Resolved r = memory_.resolve(address, 0, "allocate");
    stream_.fill_zero(r.buffer, 0, r.size);
  }
  return DeviceBuffer(this, address, bytes);
}

uint64_t VulkanBackend::grown(Scratch& scratch, int64_t bytes) {
  stream_.check_usable();
  if (scratch.bytes < bytes) {
    if (scratch.address) release(scratch.address, scratch.bytes);
    scratch = {};
    scratch.address = memory_.allocate(bytes);
    scratch.bytes = bytes;
  }
  return scratch.address;
}

void VulkanBackend::release(uint64_t address, int64_t) {
  std::lock_guard lock(mutex_);
  if (context_->closed()) return;
  try {
    stream_.finish();  // no work in flight may still use it
  } catch (const std::exception&) {
  }
  // After a failure the device may still be running work that reads this memory: it is left for
  // the process's exit to reclaim (close()), not freed now.
  if (stream_.usable()) memory_.release(address);
}

void VulkanBackend::upload(DevicePtr<void> dst, const void* src, int64_t bytes) {
  if (bytes == 0) return;
  DIFFTX_CHECK(bytes > 0 && src, "vulkan upload: ", bytes, " bytes from ", src);
  std::lock_guard lock(mutex_);
  stream_.check_usable();
  const Resolved r = memory_.resolve(dst.address(), bytes, "upload");
  stream_.upload(r.buffer, r.offset, src, bytes);
}

void VulkanBackend::download(void* dst, DevicePtr<const void> src, int64_t bytes) {
  if (bytes == 0) return;
  DIFFTX_CHECK(bytes > 0 && dst, "vulkan download: ", bytes, " bytes into ", dst);
  std::lock_guard lock(mutex_);
  stream_.check_usable();
  const Resolved r = memory_.resolve(src.address(), bytes, "download");
  stream_.download(dst, r.buffer, r.offset, bytes);
}

void VulkanBackend::copy(DevicePtr<void> dst, DevicePtr<const void> src, int64_t bytes) {
  if (bytes == 0) return;
  DIFFTX_CHECK(bytes > 0, "vulkan copy: ", bytes, " bytes");
  std::lock_guard lock(mutex_);
  stream_.check_usable();
  const Resolved from = memory_.resolve(src.address(), bytes, "copy (source)");
  const Resolved to = memory_.resolve(dst.address(), bytes, "copy (destination)");
  DIFFTX_CHECK(from.buffer != to.buffer || from.offset + bytes <= to.offset || to.offset + bytes <= from.offset,
               "vulkan copy: source and destination overlap");
  stream_.copy(from.buffer, from.offset, to.buffer, to.offset, bytes);
}

void VulkanBackend::zero(DevicePtr<void> dst, int64_t bytes) {
  if (bytes == 0) return;
  DIFFTX_CHECK(bytes > 0, "vulkan zero: ", bytes, " bytes");
  std::lock_guard lock(mutex_);
  stream_.check_usable();
  const Resolved r = memory_.resolve(dst.address(), bytes, "zero");
  // A fill takes whole words; the bytes before the first and after the last come from staging.
  const int64_t begin = (r.offset + 3) / 4 * 4, end = std::max(begin, (r.offset + bytes) / 4 * 4);
  static const unsigned char zeros[4] = {};
  stream_.upload(r.buffer, r.offset, zeros, std::min(begin, r.offset + bytes) - r.offset);
  stream_.fill_zero(r.buffer, begin, end - begin);
  if (r.offset + bytes > end) stream_.upload(r.buffer, end, zeros, r.offset + bytes - end);
}

void VulkanBackend::synchronize() {
  std::lock_guard lock(mutex_);
  stream_.finish();
}

double VulkanBackend::device_milliseconds(const std::function<void()>& record) {
  std::lock_guard lock(mutex_);
  stream_.check_usable();
  return stream_.device_milliseconds(record);
}

// ---- Binding and dispatching.

VulkanBackend::Bound VulkanBackend::bind_optional(uint64_t address, int64_t bytes, const char* what, bool words) {
  if (address == 0) return {{memory_.resolve(dummy_, 256, what).buffer, 0, 256}, 0};
  return bind(address, bytes, what, words);
}

VulkanBackend::Bound VulkanBackend::bind(uint64_t address, int64_t bytes, const char* what, bool words) {
  DIFFTX_CHECK(address != 0, "vulkan: ", what, " is a null pointer");
  const Resolved r = memory_.resolve(address, bytes, what);
  const Capabilities& caps = context_->caps();
  const int64_t aligned = r.offset / caps.binding_alignment * caps.binding_alignment;
  const int64_t delta = r.offset - aligned;
  DIFFTX_CHECK(delta % 4 == 0 || !words, "vulkan: ", what, " is not 4-byte aligned (offset ", r.offset, ")");
  const int64_t range = std::min(r.size - aligned, std::max<int64_t>(4, (delta + bytes + 3) / 4 * 4));
  DIFFTX_CHECK(range <= caps.max_binding_bytes, "vulkan: ", what, " spans ", bytes,
               " bytes; one storage-buffer binding of ", info().name, " holds at most ", caps.max_binding_bytes);
  return {{r.buffer, static_cast<VkDeviceSize>(aligned), static_cast<VkDeviceSize>(range)},
          static_cast<uint32_t>(delta)};
}

int64_t VulkanBackend::rows_per_binding(int64_t row_bytes, const char* what) const {
  const Capabilities& caps = context_->caps();
  const int64_t usable = caps.max_binding_bytes - caps.binding_alignment - 8;
  DIFFTX_CHECK(row_bytes <= usable, "vulkan: one row of ", what, " is ", row_bytes,
               " bytes; one storage-buffer binding of ", info().name, " holds at most ", usable);
  return std::max<int64_t>(1, usable / std::max<int64_t>(row_bytes, 1));
}

void VulkanBackend::run2d(std::string_view shader, std::vector<uint32_t> descriptors, const Buffers& buffers,
                          const void* push, uint32_t push_bytes, int64_t groups_x, int64_t groups_y) {
  const int64_t limit = context_->caps().max_group_count;
  DIFFTX_CHECK(groups_x <= limit && groups_y <= limit, "vulkan ", shader, ": a grid of ", groups_x, " x ", groups_y,
               " workgroups exceeds the device's ", limit);
  std::lock_guard lock(mutex_);
  stream_.check_usable();  // before the pipeline: close() destroyed them with the device
  const Pipeline& pipeline = pipelines_.get(shader, std::move(descriptors), push_bytes);
  stream_.dispatch(pipeline, buffers, push, static_cast<uint32_t>(groups_x), static_cast<uint32_t>(groups_y));
}

void VulkanBackend::run(std::string_view shader, std::vector<uint32_t> descriptors, const Buffers& buffers,
                        const void* push, uint32_t push_bytes, int64_t groups) {
  if (groups <= 0) return;
  const int64_t limit = context_->caps().max_group_count;
  const int64_t x = std::min(groups, limit), y = (groups + x - 1) / x;  // the shader skips the extra groups
  run2d(shader, std::move(descriptors), buffers, push, push_bytes, x, y);
}

// ---- What runs elsewhere.

void VulkanBackend::gemm(kernels::Trans, kernels::Trans, int64_t, int64_t, int64_t, float, DevicePtr<const float>,
                         DevicePtr<const float>, float, DevicePtr<float>) {
  not_here("gemm", "it is training's dense product; training runs on the CPU (--device cpu)");
}
void VulkanBackend::embedding_backward(DevicePtr<const int32_t>, DevicePtr<const float>, DevicePtr<float>, int64_t,
                                       int64_t) {
  not_here("embedding_backward", "training runs on the CPU (--device cpu)");
}
void VulkanBackend::rmsnorm_backward(DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                     DevicePtr<const float>, DevicePtr<float>, DevicePtr<float>, int64_t, int64_t) {
  not_here("rmsnorm_backward", "training runs on the CPU (--device cpu)");
}
void VulkanBackend::swiglu_backward(DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                    DevicePtr<float>, DevicePtr<float>, int64_t) {
  not_here("swiglu_backward", "training runs on the CPU (--device cpu)");
}
void VulkanBackend::polynorm_glu_backward(DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                          DevicePtr<const float>, DevicePtr<const float>, DevicePtr<float>,
                                          DevicePtr<float>, DevicePtr<float>, DevicePtr<float>, int64_t, int64_t) {
  not_here("polynorm_glu_backward", "training runs on the CPU (--device cpu)");
}
void VulkanBackend::diff_lambda_backward(DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                         DevicePtr<const float>, int64_t, DevicePtr<const float>, DevicePtr<float>,
                                         DevicePtr<float>, DevicePtr<float>, DevicePtr<float>) {
  not_here("diff_lambda_backward", "training runs on the CPU (--device cpu)");
}
void VulkanBackend::attention_backward(const kernels::AttentionDims&, DevicePtr<const float>, DevicePtr<const float>,
                                       DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                       DeviceAttentionSaved, DevicePtr<const float>, DevicePtr<float>, DevicePtr<float>,
                                       DevicePtr<float>, DevicePtr<float>) {
  not_here("attention_backward", "training runs on the CPU (--device cpu)");
}
void VulkanBackend::attention_forward_quantized(const kernels::AttentionDims&, DevicePtr<const float>,
                                                DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                                DevicePtr<float>, int) {
  not_here("attention_forward_quantized", "the analyses' fake-quantized attention runs on the CPU (--device cpu)");
}
double VulkanBackend::cross_entropy_forward_backward(DevicePtr<const float>, DevicePtr<const int32_t>,
                                                     DevicePtr<float>, int64_t, int64_t, int32_t, int64_t*) {
  not_here("cross_entropy_forward_backward", "training runs on the CPU (--device cpu)");
}
// Evaluation's loss: the rows' logits come to the host and the CPU level's kernel sums them, so
// `eval --device vulkan` reports the CPU's loss of the device's logits (a reduction shader would
// save the copy of rows x V floats a window).
double VulkanBackend::cross_entropy_sum(DevicePtr<const float> logits, DevicePtr<const int32_t> targets, int64_t rows,
                                        int64_t V, int32_t ignore_id, int64_t* count) {
  DIFFTX_CHECK(rows >= 0 && V > 0, "vulkan cross_entropy_sum: ", rows, " rows of ", V, " logits");
  if (rows == 0) {
    if (count) *count = 0;
    return 0;
  }
  std::vector<float> host_logits(static_cast<size_t>(rows * V));
  std::vector<int32_t> host_targets(static_cast<size_t>(rows));
  download(host_logits.data(), logits, rows * V * int64_t{sizeof(float)});
  download(host_targets.data(), targets, rows * int64_t{sizeof(int32_t)});
  return cpu_backend().cross_entropy_sum(DevicePtr<const float>(host_logits.data()),
                                         DevicePtr<const int32_t>(host_targets.data()), rows, V, ignore_id, count);
}
void VulkanBackend::adamw_update(DevicePtr<float>, DevicePtr<const float>, DevicePtr<float>, DevicePtr<float>,
                                 int64_t, const kernels::AdamWParams&, float) {
  not_here("adamw_update", "training runs on the CPU (--device cpu)");
}
double VulkanBackend::sum_of_squares(DevicePtr<const float>, int64_t) {
  not_here("sum_of_squares", "training runs on the CPU (--device cpu)");
}

// LayerNorm's backward is training's (the hybrid's forward ops are in ops_hybrid.cpp).
void VulkanBackend::layernorm_backward(DevicePtr<const float>, DevicePtr<const float>, DevicePtr<const float>,
                                       DevicePtr<const float>, DevicePtr<const float>, DevicePtr<float>,
                                       DevicePtr<float>, DevicePtr<float>, int64_t, int64_t) {
  not_here("layernorm_backward", "training runs on the CPU (--device cpu)");
}

}  // namespace difftx::backends::vulkan
