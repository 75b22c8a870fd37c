// The LM head over the rows of an engine step that want logits, in the GEMV order (every such
// row's logits depend on that row alone), into host memory: through a device buffer where the
// host cannot read the backend's memory. Shared by the decoder's and the hybrid's step.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/backend.h"

namespace difftx::infer {

class HeadLogits {
 public:
  // The logits [L, V] of the rows h [L, D] in host memory; valid until the next call.
  const float* compute(backends::Backend& backend, const backends::DeviceMatrix& lm_head,
                       backends::DevicePtr<const float> h, int64_t L, int64_t V);

 private:
  std::vector<float> host_;        // [max_rows, V]
  backends::DeviceBuffer device_;  // the same on a device whose memory the host cannot read
};

}  // namespace difftx::infer
