#include "infer/head_logits.h"

namespace difftx::infer {

const float* HeadLogits::compute(backends::Backend& backend, const backends::DeviceMatrix& lm_head,
                                 backends::DevicePtr<const float> h, int64_t L, int64_t V) {
  const int64_t bytes = L * V * int64_t{sizeof(float)};
  if (static_cast<int64_t>(host_.size()) < L * V) host_.resize(L * V);
  if (!backend.host_memory() && device_.bytes() < bytes) device_ = backend.allocate(bytes, false);
  const backends::DevicePtr<float> out = device_ ? device_.as<float>() : backends::DevicePtr<float>(host_.data());
  backend.matmul(lm_head, h, out, L, false, kernels::MatmulOrder::gemv);
  if (device_) backend.download(host_.data(), out, bytes);
  return host_.data();
}

}  // namespace difftx::infer
