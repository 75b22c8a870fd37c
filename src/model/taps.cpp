#include "model/taps.h"

#include "core/error.h"
#include "model/layer.h"

namespace difftx::model {

LayerTap layer_tap(const ModelConfig& c, const Activations& acts, int64_t layer) {
  DIFFTX_CHECK(layer >= 0 && layer < c.num_hidden_layers, "layer ", layer, " outside [0, ", c.num_hidden_layers, ")");
  const LayerActivations& s = acts.layers[layer];
  const float* out = (layer + 1 < c.num_hidden_layers ? acts.layers[layer + 1].x : acts.x_final).host();
  return {c.attention_dims(acts.B, acts.T), s.q.host(), s.k.host(), s.lambda.host(), s.att.host(), out};
}

}  // namespace difftx::model
