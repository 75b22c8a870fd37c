// The recurrent state of a hybrid stack's Mamba layers in the engine, by slot: the slots of the
// KvCacheManager's recurrent group (one per running sequence, kv_cache_manager.h). For the i-th
// Mamba layer, every slot's conv window [K - 1, E] one after another (windows(i) + slot (K - 1) E,
// the layout of Backend::mamba_conv_step) and its SSM state [E, S] (states(i) + slot E S), each
// layer's windows and states an allocation of their own: a device binds one whole pool of a
// layer's step op (a Vulkan binding is at most maxStorageBufferRange), never its neighbours.
//
// Allocated without being written, like the KV pool: a slot's pages become resident when a
// sequence first takes it (clear), so memory follows the sequences that run, not max_running.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "core/option_name.h"
#include "model/config.h"

namespace difftx::infer {

class StatePool {
 public:
  // slots >= 1, for a hybrid model. Errors name the options that size the pool as `spelling` writes them.
  StatePool(backends::Backend& backend, const model::ModelConfig& config, int64_t slots, OptionSpelling spelling);

  int64_t slots() const { return slots_; }
  OptionSpelling spelling() const { return spelling_; }  // how errors name the options that sized it
  // Bytes of one slot: every Mamba layer's window and state.
  int64_t slot_bytes() const { return layers_ * (window_floats_ + state_floats_) * int64_t{sizeof(float)}; }
  static int64_t slot_bytes(const model::ModelConfig& config);

  backends::DevicePtr<float> windows(int64_t mamba_layer) const;
  backends::DevicePtr<float> states(int64_t mamba_layer) const;
  // Zeroes the slot's windows and states (a sequence's first step).
  void clear(int32_t slot);

 private:
  backends::Backend& backend_;
  OptionSpelling spelling_;
  int64_t layers_, slots_, window_floats_, state_floats_;
  std::vector<backends::DeviceBuffer> windows_, states_;  // per Mamba layer
};

}  // namespace difftx::infer
