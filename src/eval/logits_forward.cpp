#include "eval/logits_forward.h"

#include <map>
#include <memory>

#include "core/error.h"
#include "model/decoder.h"

namespace difftx::eval {

LogitsForward model_forward(const model::Model& model, const model::ForwardOptions& options) {
  LogitsForward f;
  f.columns = model.config.vocab_size;
  f.max_tokens = model.config.max_position_embeddings;
  auto plans = std::make_shared<std::map<int64_t, model::Activations>>();
  f.run = [&model, options, plans](std::span<const int32_t> tokens, std::span<const int64_t> rows, float* out) {
    const model::ModelConfig& c = model.config;
    const auto T = static_cast<int64_t>(tokens.size());
    DIFFTX_CHECK(T >= 1 && T <= c.max_position_embeddings, "forward: a sequence of ", T,
                 " tokens; the model takes 1 to max_position_embeddings = ", c.max_position_embeddings);
    for (int64_t r : rows) DIFFTX_CHECK(r >= 0 && r < T, "forward: row ", r, " is outside the ", T, " positions");
    auto it = plans->find(T);
    if (it == plans->end())
      it = plans->try_emplace(T, c, 1, T, model::ActivationUse::forward_only, *model.backend).first;
    model::decoder_forward(model, it->second, tokens.data(), options);
    // logits = h_final W^T with the LM head W [V, D] (docs/SPEC.md §1)
    model::decoder_row_logits(model, it->second, rows.data(), static_cast<int64_t>(rows.size()), out);
  };
  return f;
}

}  // namespace difftx::eval
