#include "infer/state_pool.h"

#include <algorithm>
#include <new>

#include "core/checked.h"
#include "core/error.h"

namespace difftx::infer {
namespace {

int64_t mamba_layers(const model::ModelConfig& c) {
  return std::count_if(c.hybrid->layers.begin(), c.hybrid->layers.end(),
                       [](model::LayerKind k) {
                         return k == model::LayerKind::mamba || k == model::LayerKind::memory_mamba;
                       });
}

}  // namespace

int64_t StatePool::slot_bytes(const model::ModelConfig& c) {
  DIFFTX_CHECK(c.hybrid, "internal: a state pool for a model without Mamba layers");
  const int64_t E = c.hybrid->mamba_channels(c.hidden_size);
  return mamba_layers(c) * ((c.hybrid->mamba.d_conv - 1) * E + E * c.hybrid->mamba.d_state) *
         int64_t{sizeof(float)};
}

StatePool::StatePool(backends::Backend& backend, const model::ModelConfig& c, int64_t slots, OptionSpelling spelling)
    : backend_(backend), spelling_(spelling), layers_(0), slots_(slots) {
  DIFFTX_CHECK(c.hybrid, "internal: a state pool for a model without Mamba layers");
  DIFFTX_CHECK(slots >= 1, "state pool: ", slots, " slots must be at least 1");
  const int64_t E = c.hybrid->mamba_channels(c.hidden_size);
  layers_ = mamba_layers(c);
  window_floats_ = (c.hybrid->mamba.d_conv - 1) * E;
  state_floats_ = E * c.hybrid->mamba.d_state;
  const auto bytes = product_at_most({slots, std::max<int64_t>(layers_, 1), window_floats_ + state_floats_,
                                      int64_t{sizeof(float)}},
                                     int64_t{1} << 46);
  DIFFTX_CHECK(bytes.has_value(), "state pool: ", slots, " slots of ", slot_bytes(), " bytes exceed 64 TiB");
  const std::string fewer = concat("ask for fewer with ", option_name("max_running", spelling));
  const auto check_binding = [&](int64_t floats, const char* what) {  // a layer's pool, bound whole by the steps
    const int64_t most = floats > 0 ? backend.max_bound_rows(floats * int64_t{sizeof(float)}) : slots;
    DIFFTX_CHECK(slots <= most, "state pool: ", slots, " slots: ", backend.info().name, " binds at most ", most,
                 " of a Mamba layer's ", what, " (", floats * int64_t{sizeof(float)},
                 " bytes each); ", fewer, " (or ", option_name("draft_tokens", spelling), ")");
  };
  check_binding(window_floats_, "conv windows");
  check_binding(state_floats_, "SSM states");
  try {
    const auto floats = [&](int64_t n) { return std::max<int64_t>(slots * n, 1) * int64_t{sizeof(float)}; };
    for (int64_t i = 0; i < layers_; ++i) {  // d_conv 1: no window, one float to point at
      windows_.push_back(backend.allocate(floats(window_floats_), false));
      states_.push_back(backend.allocate(floats(state_floats_), false));
    }
  } catch (const std::bad_alloc&) {
    fail("state pool: out of memory allocating ", *bytes, " bytes (", slots, " slots of ", slot_bytes(),
         "); ", fewer);
  }
}

backends::DevicePtr<float> StatePool::windows(int64_t i) const { return windows_.at(i).as<float>(); }

backends::DevicePtr<float> StatePool::states(int64_t i) const { return states_.at(i).as<float>(); }

void StatePool::clear(int32_t slot) {
  DIFFTX_CHECK(slot >= 0 && slot < slots_, "internal: state slot ", slot, " of ", slots_);
  for (int64_t i = 0; i < layers_; ++i) {
    backend_.zero(windows(i) + slot * window_floats_, window_floats_ * int64_t{sizeof(float)});
    backend_.zero(states(i) + slot * state_floats_, state_floats_ * int64_t{sizeof(float)});
  }
}

}  // namespace difftx::infer
