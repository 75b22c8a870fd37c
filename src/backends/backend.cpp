#include "backends/backend.h"

#include <utility>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"

namespace difftx::backends {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : owner_(std::exchange(o.owner_, nullptr)),
      address_(std::exchange(o.address_, 0)),
      bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(owner_, o.owner_);
  std::swap(address_, o.address_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (owner_ && address_) owner_->release(address_, bytes_);
}

RopeTableBuffer make_rope_table(Backend& backend, int64_t max_T, int64_t d, double theta,
                                const kernels::RopeScaling& scaling) {
  const int64_t floats = kernels::rope_table_floats(max_T, d);
  RopeTableBuffer out;
  out.storage = backend.allocate(floats * static_cast<int64_t>(sizeof(float)), false);
  std::vector<float> staging(backend.host_memory() ? 0 : floats);
  float* storage = backend.host_memory() ? out.storage.as<float>().host() : staging.data();
  const kernels::RopeTable built = cpu::kernels().rope_table_build(storage, max_T, d, theta, scaling);
  if (!backend.host_memory()) backend.upload(out.storage.as<void>(), staging.data(), floats * sizeof(float));
  const DevicePtr<const float> base = out.storage.as<const float>();
  out.table = {max_T, d, base, base + (built.sin - built.cos)};
  return out;
}

void Backend::gmu_forward(const DeviceMatrix& in_proj, const DeviceMatrix& out_proj, DevicePtr<const float> x,
                          DevicePtr<const float> memory, DevicePtr<float> gate, DevicePtr<float> out, int64_t rows,
                          bool accumulate, kernels::MatmulOrder order) {
  DIFFTX_CHECK(in_proj.rows == out_proj.cols && in_proj.cols == out_proj.rows, info().name, " gmu_forward: in_proj [",
               in_proj.rows, ", ", in_proj.cols, "] and out_proj [", out_proj.rows, ", ", out_proj.cols,
               "] must be [E, D] and [D, E]");
  DIFFTX_CHECK(rows >= 0, info().name, " gmu_forward: rows must be >= 0, got ", rows);
  if (rows == 0) return;
  matmul(in_proj, x, gate, rows, false, order);
  swiglu_forward(gate, memory, gate, rows * in_proj.rows);  // silu(gate) * memory, in place
  matmul(out_proj, gate, out, rows, accumulate, order);
}

}  // namespace difftx::backends
