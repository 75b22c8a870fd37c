// MambaDims' checks (mamba.h), compiled once.
#include "core/error.h"
#include "kernels/mamba.h"

namespace difftx::kernels {

void MambaDims::validate() const {
  DIFFTX_CHECK(channels >= 1 && channels <= (int64_t{1} << 24),
               "mamba dims: field 'channels' (E) must be in [1, 2^24], got ", channels);
  DIFFTX_CHECK(state >= 1 && state <= kMambaMostState, "mamba dims: field 'state' (S) must be in [1, ", kMambaMostState,
               "], got ", state);
  DIFFTX_CHECK(conv >= 1 && conv <= 64, "mamba dims: field 'conv' (K) must be in [1, 64], got ", conv);
}

}  // namespace difftx::kernels
