// The engine's pools on a device whose ops bind a bounded range at once (Backend::
// max_paged_kv_regions, max_bound_rows): the default KV pool is sized within it, and a pool asked
// past it is an error when the engine starts, naming the option, never an engine that starts and
// then fails every request.
#include <gtest/gtest.h>

#include <string>

#include "infer/engine.h"
#include "support/engine_runs.h"
#include "support/random_model.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {
namespace {

using testing::VulkanTest;

// 4 KiB bindings: the KV pool's 8 windows of whole (block, layer) regions hold 4 blocks of this
// model's BF16 cache (4 KiB a region, 2 layers), 128 tokens; its default would be 512.
TEST_F(VulkanTest, TheDefaultKvPoolFitsTheDevicesBindingsAndServes) {
  const auto small_bindings = open_small_bindings();
  model::Model model = testing::random_model(testing::engine_config(kernels::AttentionKind::baseline, 64, 96, 512), 7);
  model.move_to(*small_bindings);
  infer::Engine engine(model, nullptr, {});
  EXPECT_EQ(engine.context(), 128);
  infer::Request r{{5, 9, 2, 7, 1, 3}, {}, {}, {}};
  r.options.max_new_tokens = 4;
  testing::Stream out;
  testing::submit_recorded(engine, r, out);
  engine.run_until_idle();
  EXPECT_EQ(out.ids().size(), 4u);
  EXPECT_EQ(out.finish(), infer::FinishReason::length);

  for (const bool by_tokens : {true, false}) {
    infer::EngineOptions o;
    (by_tokens ? o.kv_tokens : o.kv_bytes) = by_tokens ? 512 : 64 * 1024;
    o.spelling = by_tokens ? OptionSpelling::flag : OptionSpelling::field;  // the CLI's, the library's
    const std::string message = testing::error_of([&] { infer::Engine past(model, nullptr, o); });
    EXPECT_NE(message.find("at most 4 (32768 bytes)"), std::string::npos) << message;
    EXPECT_NE(message.find(by_tokens ? "--kv-tokens or --kv-bytes" : "with kv_tokens or kv_bytes"), std::string::npos)
        << message;
  }
  expect_no_validation_messages(*small_bindings);
}

// 32 KiB bindings hold 7 of a hybrid's 4 KiB Mamba states; 64 running sequences need 70 slots.
TEST_F(VulkanTest, AStatePoolPastOneBindingIsAnErrorWhenTheEngineStarts) {
  backends::vulkan::Options options;
  options.max_binding_bytes = 32 * 1024;
  const auto small_bindings = open_another(options);
  model::Model model = testing::random_model(testing::small_hybrid_config(), 7);
  model.move_to(*small_bindings);
  infer::EngineOptions o;
  o.spelling = OptionSpelling::flag;
  const std::string message = testing::error_of([&] { infer::Engine engine(model, nullptr, o); });
  EXPECT_NE(message.find("70 slots"), std::string::npos) << message;
  EXPECT_NE(message.find("--max-running"), std::string::npos) << message;
}

}  // namespace
}  // namespace difftx
