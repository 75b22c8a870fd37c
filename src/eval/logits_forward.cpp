#include "eval/logits_forward.h"

#include <map>
#include <memory>

#include "core/error.h"
#include "model/decoder.h"

namespace difftx {

LogitsForward model_forward(const Model& model) {
  LogitsForward f;
  f.columns = model.config.vocab_size;
  f.max_tokens = model.config.max_position_embeddings;
  auto plans = std::make_shared<std::map<int64_t, Activations>>();
  f.run = [&model, plans, max = f.max_tokens](std::span<const int32_t> tokens, float* logits) {
    const auto T = static_cast<int64_t>(tokens.size());
    DIFFTX_CHECK(T >= 1 && T <= max, "forward: a sequence of ", T, " tokens; the model takes 1 to ",
                 "max_position_embeddings = ", max);
    auto it = plans->find(T);
    if (it == plans->end()) it = plans->try_emplace(T, model.config, 1, T).first;
    decoder_logits(model, it->second, tokens.data(), logits);
  };
  return f;
}

}  // namespace difftx
