#include "model/initial_weights.h"

#include <vector>

#include "core/error.h"

namespace difftx::model {

InitialWeights::InitialWeights(const ModelConfig& config, uint64_t seed)
    : config_(config), table_(config), seed_(seed), rng_(seed) {}

void InitialWeights::read(const std::string& name, std::span<float> out) const {
  const std::vector<ParamInfo>& params = table_.params();
  size_t index = 0;
  while (index < params.size() && params[index].name != name) ++index;
  DIFFTX_CHECK(index < params.size(), "internal: the model has no tensor '", name, "'");
  DIFFTX_CHECK(static_cast<int64_t>(out.size()) == params[index].numel, "internal: tensor '", name, "' has ",
               params[index].numel, " elements, the destination ", out.size());
  if (index < next_) rng_ = Rng(seed_), next_ = 0;
  for (; next_ < index; ++next_) rng_.skip(init_draws(params[next_]));
  init_tensor(config_, params[index], rng_, out.data());
  ++next_;
}

}  // namespace difftx::model
