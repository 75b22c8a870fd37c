// The stream's barriers (backends/vulkan/stream.h) go only where a command depends on one before
// it. The validation layer's synchronization checks (on in every VulkanTest backend) see each
// command's reads and writes and report a read after a write, a write after a read or a write
// after a write with no barrier between them: a missed dependency is a message, and a message
// fails the test. So the engine runs every kind of step here: prompts cut into chunks beside
// decode rows, prompt lookup's drafted rows, a draft model's own steps, each variant, and the
// hybrid stack (its Mamba state copies and cross-decoder moves), on small bindings that cut
// operands into windows.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "backends/vulkan/pipelines.h"
#include "backends/vulkan/spirv_bindings.h"
#include "infer/engine.h"
#include "support/engine_runs.h"
#include "support/random_model.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {
namespace {

using testing::VulkanTest;

void serve_mixed_requests(infer::Engine& engine) {
  std::vector<testing::Stream> out(4);
  for (int i = 0; i < 4; ++i) {
    infer::Request r{{}, {}, {}, {}};
    for (int t = 0; t < 9 + 7 * i; ++t) r.prompt.push_back((5 + 3 * t + i) % 40 + 2);
    for (int t = 0; t < 6; ++t) r.prompt.push_back(r.prompt[t]);  // something for prompt lookup to find
    r.options.max_new_tokens = 6 + i;
    r.options.sampling.temperature = i % 2 ? 0.8 : 0;
    r.options.sampling.seed = 11 + i;
    testing::submit_recorded(engine, r, out[i]);
  }
  engine.run_until_idle();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i].ids().size(), static_cast<size_t>(6 + i)) << "request " << i;
}

TEST_F(VulkanTest, EveryEngineStepsDependenciesHaveTheirBarriers) {
  backends::vulkan::Options options;
  options.max_binding_bytes = 64 * 1024;  // operands cut into windows, the KV pool's regions whole
  const auto device = open_another(options);
  const model::ModelConfig configs[] = {
      testing::engine_config(kernels::AttentionKind::baseline, 64, 48, 256),
      testing::engine_config(kernels::AttentionKind::diff, 64, 48, 256),
      testing::engine_config(kernels::AttentionKind::diff2, 64, 48, 256),
      testing::small_hybrid_config(64, 8, 5, 48, 256)};
  for (const model::ModelConfig& config : configs) {
    SCOPED_TRACE(config.hybrid ? "hybrid" : kernels::attention_kind_name(config.attention));
    model::Model model = testing::random_model(config, 3);
    model.move_to(*device);
    infer::EngineOptions o;
    o.max_batch_tokens = 24;  // prompts in chunks, beside other sequences' decode rows
    o.max_running = 2;        // the hybrid's state slots (1 + draft_tokens each) within one binding
    o.draft = infer::DraftMode::ngram;
    o.draft_tokens = 4;
    infer::Engine engine(model, nullptr, o);
    serve_mixed_requests(engine);
    if (config.hybrid) continue;  // a draft model is a plain decoder
    model::Model draft = testing::random_model(config, 4);
    draft.move_to(*device);
    o.draft = infer::DraftMode::model;
    o.draft_model = &draft;
    infer::Engine drafted(model, nullptr, o);
    serve_mixed_requests(drafted);
  }
  expect_no_validation_messages(*device);
}

std::span<const uint32_t> code(const char* name) {
  for (const backends::vulkan::ShaderCode& c : backends::vulkan::shader_codes())
    if (std::string(c.name) == name) return std::span<const uint32_t>(c.words, c.word_count);
  ADD_FAILURE() << "no shader " << name;
  return std::span<const uint32_t>();
}

// The bindings a shader writes, read from its SPIR-V: `readonly` ones are not written.
TEST_F(VulkanTest, TheStreamKnowsWhichBindingsAShaderWrites) {
  // rmsnorm: x and g read, y and rstd written.
  EXPECT_EQ(backends::vulkan::writable_bindings(code("rmsnorm_2048"), 4),
            (std::vector<bool>{false, false, true, true}));
  // paged_attention: q, lengths, tables, blocks read, the partials written, the cache's windows read.
  EXPECT_EQ(backends::vulkan::writable_bindings(code("paged_attention_p32s"), 6),
            (std::vector<bool>{false, false, false, false, true, false}));
  // A binding the shader does not declare counts as written.
  EXPECT_EQ(backends::vulkan::writable_bindings(code("rmsnorm_2048"), 5).back(), true);
  const uint32_t not_spirv[] = {1, 2, 3, 4, 5};
  EXPECT_NE(testing::error_of([&] { backends::vulkan::writable_bindings(not_spirv, 1); }).find("not SPIR-V"),
            std::string::npos);
}

// What a shader's workgroup asks of the device, read from its SPIR-V: its size and shared memory.
TEST_F(VulkanTest, AShadersWorkgroupNeedsAreReadFromItsSpirv) {
  using backends::vulkan::workgroup_needs;
  EXPECT_EQ(workgroup_needs(code("rmsnorm_256")).invocations(), 32u);  // WG=32
  EXPECT_EQ(workgroup_needs(code("rmsnorm_4096")).invocations(), 256u);
  EXPECT_EQ(workgroup_needs(code("add")).shared_bytes, 0);
  // paged_attention.comp at 32 pairs: qs (2048 floats) and scores (32 x 128 floats) alone are 24 KiB.
  EXPECT_GT(workgroup_needs(code("paged_attention_p32s")).shared_bytes, 24 << 10);
  EXPECT_GT(workgroup_needs(code("matmul_gemm64_f32")).shared_bytes, 16 << 10);
  // Every shader of the build fits the device the tests run on.
  const VkPhysicalDeviceLimits& limits = vk().context().properties().limits;
  for (const backends::vulkan::ShaderCode& c : backends::vulkan::shader_codes())
    EXPECT_NO_THROW(backends::vulkan::check_limits(limits, vk().info().name, c.name,
                                                   workgroup_needs({c.words, c.word_count}), 13, 128))
        << c.name;
}

// A device whose limits are below what a shader needs: an error naming the device, the limit,
// what it has and what the shader needs, before any pipeline is created.
TEST_F(VulkanTest, AShaderBeyondTheDevicesLimitsIsAClearError) {
  using backends::vulkan::check_limits;
  const auto needs = backends::vulkan::workgroup_needs(code("paged_attention_p32s"));
  VkPhysicalDeviceLimits limits = vk().context().properties().limits;
  limits.maxComputeSharedMemorySize = 16384;
  std::string error =
      testing::error_of([&] { check_limits(limits, "a small GPU", "paged_attention_p32s", needs, 13, 0); });
  EXPECT_NE(error.find("a small GPU"), std::string::npos) << error;
  EXPECT_NE(error.find("paged_attention_p32s"), std::string::npos) << error;
  EXPECT_NE(error.find("maxComputeSharedMemorySize is 16384"), std::string::npos) << error;
  EXPECT_NE(error.find("needs " + std::to_string(needs.shared_bytes)), std::string::npos) << error;
  limits = vk().context().properties().limits;
  limits.maxComputeWorkGroupInvocations = 128;
  const auto norm = backends::vulkan::workgroup_needs(code("rmsnorm_4096"));
  error = testing::error_of([&] { check_limits(limits, "a small GPU", "rmsnorm_4096", norm, 4, 0); });
  EXPECT_NE(error.find("maxComputeWorkGroupInvocations is 128"), std::string::npos) << error;
  limits = vk().context().properties().limits;
  limits.maxPerStageDescriptorStorageBuffers = 8;
  error = testing::error_of([&] { check_limits(limits, "a small GPU", "paged_attention_p32s", needs, 13, 0); });
  EXPECT_NE(error.find("maxPerStageDescriptorStorageBuffers is 8; the shader needs 13"), std::string::npos) << error;
  // Pipelines::get checks before it creates anything: here, more storage buffers than the device binds.
  backends::vulkan::Pipelines pipelines(const_cast<backends::vulkan::Context&>(vk().context()));
  const uint32_t most = vk().context().properties().limits.maxPerStageDescriptorStorageBuffers;
  error = testing::error_of([&] { pipelines.get("add", {most + 1, 1, 1}, 16); });
  EXPECT_NE(error.find("maxPerStageDescriptorStorageBuffers is " + std::to_string(most)), std::string::npos) << error;
  EXPECT_EQ(pipelines.created(), 0);
}

}  // namespace
}  // namespace difftx
