#include "model/forward_logits.h"

#include "model/activations.h"
#include "model/decoder.h"
#include "model/hybrid_decoder.h"

namespace difftx::model {

void forward_logits(const Model& model, std::span<const int32_t> ids, float* out) {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (model.config.hybrid) {
    HybridActivations acts(model.config, 1, T, *model.backend);
    hybrid_logits(model, acts, ids.data(), out);
  } else {
    Activations acts(model.config, 1, T, ActivationUse::forward_only, *model.backend);
    decoder_logits(model, acts, ids.data(), out);
  }
}

}  // namespace difftx::model
