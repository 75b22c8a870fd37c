// The Vulkan backend's memory: device addresses, transfers at odd sizes and offsets, zeroed
// allocations, and the errors of memory that is not there (no loader, out of memory, freed or
// host addresses, ranges past an allocation).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "backends/vulkan/api.h"
#include "backends/vulkan/context.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/vulkan.h"
#include "core/rng.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {
namespace {

using backends::DeviceBuffer;
using backends::DevicePtr;
using testing::VulkanTest;

TEST(VulkanLoader, MissingLoaderIsAClearError) {
  const std::string error = testing::error_of([] { backends::vulkan::Api::load("/nonexistent/libvulkan.so.1"); });
  EXPECT_NE(error.find("no Vulkan loader"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/libvulkan.so.1"), std::string::npos) << error;
  EXPECT_NE(error.find("libvulkan1"), std::string::npos) << error;  // what to install
}

TEST(VulkanLoader, DeviceNames) {
  EXPECT_TRUE(backends::vulkan::names_vulkan("vulkan"));
  EXPECT_TRUE(backends::vulkan::names_vulkan("vulkan:3"));
  EXPECT_FALSE(backends::vulkan::names_vulkan("cpu"));
  for (const char* bad : {"vulkan:", "vulkan:x", "vulkan:-1", "vulkan:123456"})
    EXPECT_NE(testing::error_of([&] { backends::vulkan::open_device(bad); }).find("expected vulkan:N"),
              std::string::npos)
        << bad;
}

TEST_F(VulkanTest, ListsTheDeviceInUseWithMemoryAndFeatures) {
  const auto lines = backends::vulkan::device_listing();
  ASSERT_FALSE(lines.empty());
  bool found = false;
  for (const std::string& line : lines) found |= line.find(vk().info().name) != std::string::npos;
  EXPECT_TRUE(found) << lines[0];
  EXPECT_GT(vk().info().memory_bytes, 0);
  EXPECT_NE(vk().info().features.find("binding"), std::string::npos) << vk().info().features;
  const std::string beyond = "vulkan:" + std::to_string(lines.size());
  const std::string error = testing::error_of([&] { backends::vulkan::VulkanBackend(static_cast<int>(lines.size())); });
  EXPECT_NE(error.find("no device " + beyond), std::string::npos) << error;
}

TEST_F(VulkanTest, TransfersAtOddSizesAndOffsets) {
  Rng rng(7);
  std::vector<unsigned char> bytes(100003);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng.next_u64() & 255);
  DeviceBuffer a = vk().allocate(static_cast<int64_t>(bytes.size()));
  DeviceBuffer b = vk().allocate(static_cast<int64_t>(bytes.size()));
  EXPECT_FALSE(a.as<void>().on_host());
  vk().upload(a.as<void>(), bytes.data(), static_cast<int64_t>(bytes.size()));
  // Unaligned sub-ranges, and a copy between allocations.
  vk().upload(backends::device_cast<void>(a.as<unsigned char>() + 3), bytes.data() + 50000, 17);
  vk().copy(backends::device_cast<void>(b.as<unsigned char>() + 1),
            backends::device_cast<const void>(a.as<unsigned char>() + 5), 99001);
  std::vector<unsigned char> want = bytes;
  std::memcpy(want.data() + 3, bytes.data() + 50000, 17);
  std::vector<unsigned char> got(bytes.size());
  vk().download(got.data(), a.as<const void>(), static_cast<int64_t>(got.size()));
  EXPECT_EQ(got, want);
  std::vector<unsigned char> copied(99001);
  vk().download(copied.data(), backends::device_cast<const void>(b.as<unsigned char>() + 1), 99001);
  EXPECT_TRUE(std::equal(copied.begin(), copied.end(), want.begin() + 5));
  // More than the staging holds, both ways.
  std::vector<float> big(5'000'000);
  std::iota(big.begin(), big.end(), 0.0f);
  DeviceBuffer c = vk().allocate(static_cast<int64_t>(big.size() * 4));
  vk().upload(c.as<void>(), big.data(), static_cast<int64_t>(big.size() * 4));
  std::vector<float> back(big.size());
  vk().download(back.data(), c.as<const void>(), static_cast<int64_t>(back.size() * 4));
  EXPECT_EQ(back, big);
}

TEST_F(VulkanTest, ZeroClearsExactlyItsBytesAtAnyAlignment) {
  const std::vector<unsigned char> ones(64, 0xAB);
  for (auto [at, n] : {std::pair<int64_t, int64_t>{0, 64}, {1, 2}, {3, 9}, {4, 8}, {5, 50}, {63, 1}}) {
    DeviceBuffer a = to_device(ones);
    vk().zero(backends::device_cast<void>(a.as<unsigned char>() + at), n);
    const auto got = to_host<unsigned char>(a, 64);
    for (int64_t i = 0; i < 64; ++i)
      ASSERT_EQ(got[i], i >= at && i < at + n ? 0 : 0xAB) << at << "+" << n << " at " << i;
  }
  EXPECT_FALSE(vk().trains());
}

TEST_F(VulkanTest, AllocationsAreZeroedAndFreed) {
  const int64_t free_before = vk().free_bytes();
  {
    DeviceBuffer a = vk().allocate(1 << 20);
    const auto host = to_host<float>(a, 1 << 18);
    EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](float x) { return x == 0.0f; }));
    EXPECT_LE(vk().free_bytes(), free_before);
  }
  DeviceBuffer moved;
  {
    DeviceBuffer a = vk().allocate(64);
    moved = std::move(a);
    EXPECT_FALSE(a);
  }
  EXPECT_TRUE(moved);
  vk().upload(moved.as<void>(), "0123456789", 10);  // still alive after the move
}

TEST_F(VulkanTest, BadAddressesAndSizesAreErrors) {
  DeviceBuffer a = vk().allocate(256);
  const uint64_t freed = [&] {
    DeviceBuffer b = vk().allocate(256);
    return b.as<void>().address();
  }();
  float host = 0;
  std::vector<float> out(64);
  EXPECT_NE(testing::error_of([&] { vk().download(out.data(), DevicePtr<const void>::at(freed), 4); })
                .find("no live allocation"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { vk().download(out.data(), DevicePtr<const void>(&host), 4); })
                .find("not this device's memory"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              vk().download(out.data(), backends::device_cast<const void>(a.as<float>() + 60), 64);
            }).find("outside"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { (void)a.as<float>().host(); }).find("read on the host"), std::string::npos);
  // A required operand given as null is an error naming it, never a write into a stand-in buffer;
  // an optional one (rmsnorm's rstd) is not.
  const DeviceBuffer g = vk().allocate(64 * 4), y = vk().allocate(64 * 4);
  const std::string null_x = testing::error_of(
      [&] { vk().rmsnorm_forward(DevicePtr<const float>(), g.as<const float>(), y.as<float>(), {}, 1, 64, 1e-5f); });
  EXPECT_NE(null_x.find("rmsnorm x is a null pointer"), std::string::npos) << null_x;
  vk().rmsnorm_forward(y.as<const float>(), g.as<const float>(), y.as<float>(), {}, 1, 64, 1e-5f);
  vk().rmsnorm_forward(DevicePtr<const float>(), DevicePtr<const float>(), y.as<float>(), {}, 0, 64, 1e-5f);
}

TEST_F(VulkanTest, AnAllocationThatDoesNotFitSaysWhatItNeedsAndWhatIsFree) {
  const int64_t huge = int64_t{1} << 50;  // 1 PiB
  const std::string error = testing::error_of([&] { vk().allocate(huge); });
  EXPECT_NE(error.find(std::to_string(huge)), std::string::npos) << error;
  // Sizes that rounding up to whole 256 bytes would carry past int64: refused as too big.
  for (const int64_t most : {INT64_MAX, INT64_MAX - 100}) {
    const std::string refused = testing::error_of([&] { vk().allocate(most); });
    EXPECT_NE(refused.find("one buffer holds at most"), std::string::npos) << refused;
  }
  // More than the device's memory, within what one buffer may hold.
  const int64_t beyond = vk().info().memory_bytes + (1 << 20);
  if (beyond <= vk().context().caps().max_buffer_bytes) {
    const std::string refused = testing::error_of([&] { vk().allocate(beyond); });
    EXPECT_NE(refused.find("out of memory"), std::string::npos) << refused;
    EXPECT_NE(refused.find(std::to_string(beyond)), std::string::npos) << refused;
    EXPECT_NE(refused.find("free of"), std::string::npos) << refused;
  }
}

// A binding limit for the tests' split paths below 4 KiB would leave the windowed ops no whole step.
TEST_F(VulkanTest, ATinyBindingLimitIsAnError) {
  backends::vulkan::Options options;
  options.max_binding_bytes = 1000;
  const std::string error = testing::error_of([&] { open_another(options); });
  EXPECT_NE(error.find("max_binding_bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("1000"), std::string::npos) << error;
}

// A device that does not finish in time is an error, never a hang; the backend then refuses work,
// and going away neither waits for what may still be running nor frees what it uses.
TEST_F(VulkanTest, AWaitThatTimesOutIsAnErrorAndTheBackendStopsCleanly) {
  backends::vulkan::Options options;
  options.timeout_seconds = 1e-6;
  std::string error, after;
  {
    const auto backend = open_another(options);
    backends::vulkan::VulkanBackend& slow = *backend;
    Rng rng(8);
    const std::vector<float> x = testing::random_vector(4096 * 256, rng);
    DeviceBuffer w = slow.allocate(4096 * 256 * 4), xd = slow.allocate(256 * 4 * 64), y = slow.allocate(4096 * 4 * 64);
    error = testing::error_of([&] {
      slow.upload(w.as<void>(), x.data(), 4096 * 256 * 4);
      for (int i = 0; i < 8; ++i)
        slow.matmul({kernels::WeightType::f32, w.as<const void>(), 4096, 256, nullptr}, xd.as<const float>(),
                    y.as<float>(), 64, false, kernels::MatmulOrder::gemm);
      slow.synchronize();
    });
    after = testing::error_of([&] { slow.allocate(64); slow.synchronize(); });
    for (const std::string& m : slow.validation_messages()) ADD_FAILURE() << "Vulkan validation: " << m;  // unsynced
  }
  EXPECT_NE(error.find("did not finish its work within"), std::string::npos) << error;
  EXPECT_NE(error.find("DIFFTX_VULKAN_TIMEOUT"), std::string::npos) << error;
  EXPECT_NE(after.find("can do no more work"), std::string::npos) << after;
}

// What the process's exit does to every live backend (before the driver's own exit handlers
// run): the work finished, everything destroyed; memory freed later (a static object's) is
// nothing, and more work is a clear error.
TEST_F(VulkanTest, AClosedBackendFreesNothingMoreAndRefusesWork) {
  const auto backend = open_another({});
  DeviceBuffer buffer = backend->allocate(1024);
  const std::vector<float> x(256, 1.5f);
  backend->upload(buffer.as<void>(), x.data(), 1024);
  expect_no_validation_messages(*backend);
  backend->close();
  backend->close();  // again: nothing
  const std::string error = testing::error_of([&] { backend->synchronize(); });
  EXPECT_NE(error.find("was closed"), std::string::npos) << error;
  buffer = DeviceBuffer();  // freed after the close: nothing happens
}

// Every op after the close is that error, from any thread (Python's daemon threads run ops while
// the interpreter exits): none reaches the destroyed device.
TEST_F(VulkanTest, OpsOfOtherThreadsDuringAndAfterTheCloseAreErrors) {
  const auto backend = open_another({});
  const int64_t n = 4096;
  DeviceBuffer x = backend->allocate(n * 4), y = backend->allocate(n * 4);
  backend->add(y.as<float>(), x.as<const float>(), n);
  backend->synchronize();
  std::vector<std::string> stopped(2);
  std::vector<std::thread> threads;
  for (std::string& why : stopped)
    threads.emplace_back([&] {
      while (why.empty()) why = testing::error_of([&] { backend->add(y.as<float>(), x.as<const float>(), n); });
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  backend->close();
  for (std::thread& t : threads) t.join();
  for (const std::string& why : stopped) EXPECT_FALSE(why.empty());
  std::vector<float> host(16, 1.0f);
  for (const auto& [op, error] : std::vector<std::pair<const char*, std::string>>{
           {"add", testing::error_of([&] { backend->add(y.as<float>(), x.as<const float>(), n); })},
           {"allocate", testing::error_of([&] { backend->allocate(1024); })},
           {"upload", testing::error_of([&] { backend->upload(x.as<void>(), host.data(), 64); })},
           {"download", testing::error_of([&] { backend->download(host.data(), y.as<const void>(), 64); })},
           {"copy", testing::error_of([&] { backend->copy(x.as<void>(), y.as<const void>(), 64); })},
           {"zero", testing::error_of([&] { backend->zero(x.as<void>(), 6); })},
           {"device_milliseconds", testing::error_of([&] { backend->device_milliseconds([] {}); })}})
    EXPECT_NE(error.find(backend->info().name + " was closed (the process is exiting)"), std::string::npos)
        << op << ": " << error;
}

// A wait that times out while the backend closes (at the process's exit): the work may still be
// running, so nothing it uses is destroyed or freed, and the device is neither waited for (it may
// never finish) nor destroyed; the timeout is said on stderr.
TEST_F(VulkanTest, ACloseWhoseWaitTimesOutDestroysNothing) {
  backends::vulkan::Options options;
  options.timeout_seconds = 1e-6;
  const auto backend = open_another(options);
  Rng rng(9);
  const std::vector<float> w = testing::random_vector(4096 * 256, rng);
  DeviceBuffer wd = backend->allocate(4096 * 256 * 4), x = backend->allocate(256 * 4 * 64),
               y = backend->allocate(4096 * 4 * 64);
  backend->upload(wd.as<void>(), w.data(), 4096 * 256 * 4);
  for (int i = 0; i < 8; ++i)  // in flight, or recorded: the close's wait gives it a microsecond
    backend->matmul({kernels::WeightType::f32, wd.as<const void>(), 4096, 256, nullptr}, x.as<const float>(),
                    y.as<float>(), 64, false, kernels::MatmulOrder::gemm);
  ::testing::internal::CaptureStderr();
  backend->close();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("did not finish its work within"), std::string::npos) << err;
  EXPECT_NE(err.find("left for the process's exit"), std::string::npos) << err;
  for (const std::string& m : backend->validation_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
  EXPECT_NE(testing::error_of([&] { backend->synchronize(); }).find("was closed"), std::string::npos);
}

// A submit that fails (here VK_ERROR_OUT_OF_HOST_MEMORY, injected) loses the ops recorded in its
// batch: the backend fails for good, each later op an error naming the submit's result, even
// where the failure came in a destructor that could not throw (a buffer's release).
VKAPI_ATTR VkResult VKAPI_CALL submit_out_of_host_memory(VkQueue, uint32_t, const VkSubmitInfo*, VkFence) {
  return VK_ERROR_OUT_OF_HOST_MEMORY;
}

TEST_F(VulkanTest, AFailedSubmitFailsEveryLaterOp) {
  const auto backend = open_another({});
  const int64_t n = 1024;
  const std::vector<float> ones(n, 1.0f);
  DeviceBuffer x = backend->allocate(n * 4), y = backend->allocate(n * 4);
  backend->upload(x.as<void>(), ones.data(), n * 4);
  backend->synchronize();
  backend->add(y.as<float>(), x.as<const float>(), n);  // recorded, not yet submitted
  // The stream calls the entry points the context loaded: the submit replaced there.
  auto& api = const_cast<backends::vulkan::Api&>(backend->context().api());
  const PFN_vkQueueSubmit submit = api.vkQueueSubmit;
  api.vkQueueSubmit = submit_out_of_host_memory;
  { DeviceBuffer scratch = backend->allocate(256); }  // its release submits the batch: the error swallowed
  api.vkQueueSubmit = submit;
  std::vector<float> got(n, -1.0f);
  const std::string error = testing::error_of([&] { backend->download(got.data(), y.as<const void>(), n * 4); });
  EXPECT_NE(error.find("vkQueueSubmit: VK_ERROR_OUT_OF_HOST_MEMORY"), std::string::npos) << error;
  EXPECT_NE(error.find("can do no more work"), std::string::npos) << error;
  EXPECT_EQ(got[0], -1.0f);  // not the stale 0 the dropped add left behind
  EXPECT_NE(testing::error_of([&] { backend->allocate(64); }).find("VK_ERROR_OUT_OF_HOST_MEMORY"), std::string::npos);
}

// DIFFTX_VULKAN_VALIDATION=1's reporting (open_device): a message of the layer on stderr as it
// comes, not only in validation_messages(), which no command reads. Provoked by a buffer of size 0.
TEST_F(VulkanTest, ReportedValidationMessagesGoToStderr) {
  backends::vulkan::Options options;
  options.report_validation = true;
  const auto backend = open_another(options);
  const backends::vulkan::Context& context = backend->context();
  if (!context.validation()) GTEST_SKIP() << "no validation layer";
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  ::testing::internal::CaptureStderr();
  const VkResult result = context.api().vkCreateBuffer(context.device(), &info, nullptr, &buffer);
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (result == VK_SUCCESS) context.api().vkDestroyBuffer(context.device(), buffer, nullptr);
  ASSERT_FALSE(backend->validation_messages().empty());
  EXPECT_NE(err.find("difftx: vulkan validation error: "), std::string::npos) << err;
  EXPECT_NE(err.find(backend->validation_messages()[0].substr(7)), std::string::npos) << err;
}

// DIFFTX_VULKAN_PIPELINE_STATS=1: what the driver reports of each pipeline (on a GPU: its
// registers and spills), on stderr as the pipeline is created. lavapipe 22.3 reports none: skipped.
TEST_F(VulkanTest, PipelineStatisticsGoToStderrAsEachPipelineIsCreated) {
  backends::vulkan::Options options;
  options.pipeline_statistics = true;  // what open_device sets for DIFFTX_VULKAN_PIPELINE_STATS=1
  const auto backend = open_another(options);
  if (!backend->context().caps().pipeline_statistics) GTEST_SKIP() << "no VK_KHR_pipeline_executable_properties";
  DeviceBuffer sum = backend->allocate(64 * 4), term = backend->allocate(64 * 4);
  ::testing::internal::CaptureStderr();
  backend->add(sum.as<float>(), term.as<const float>(), 64);
  backend->add(sum.as<float>(), term.as<const float>(), 64);  // the same pipeline: printed once
  backend->synchronize();
  const std::string err = ::testing::internal::GetCapturedStderr();
  const size_t at = err.find("vulkan pipeline add: ");
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_EQ(err.find("vulkan pipeline add: ", at + 1), std::string::npos) << err;
  EXPECT_NE(err.find('=', at), std::string::npos) << err;
}

// "vulkan" is the device it chooses, not a second backend beside vulkan:N.
TEST_F(VulkanTest, TheDefaultNameAndItsNumberAreOneBackend) {
  backends::Backend& chosen = backends::vulkan::open_device("vulkan");
  const int index = static_cast<backends::vulkan::VulkanBackend&>(chosen).context().index();
  EXPECT_EQ(&chosen, &backends::vulkan::open_device("vulkan:" + std::to_string(index)));
  EXPECT_EQ(&chosen, &backends::vulkan::open_device("vulkan"));
}

// DIFFTX_VULKAN_PROFILE=1: the device's time per shader, printed when the backend closes.
TEST_F(VulkanTest, TheProfileNamesEachShaderWithItsCallsAndTime) {
  setenv("DIFFTX_VULKAN_PROFILE", "1", 1);
  const auto backend = open_another({});
  unsetenv("DIFFTX_VULKAN_PROFILE");
  const std::vector<float> w(64 * 32, 0.25f), x(32, 2.0f);
  DeviceBuffer wd = backend->allocate(64 * 32 * 4), xd = backend->allocate(32 * 4), y = backend->allocate(64 * 4);
  backend->upload(wd.as<void>(), w.data(), 64 * 32 * 4);
  backend->upload(xd.as<void>(), x.data(), 32 * 4);
  for (int i = 0; i < 3; ++i)
    backend->matmul({kernels::WeightType::f32, wd.as<const void>(), 64, 32, nullptr}, xd.as<const float>(),
                    y.as<float>(), 1, false, kernels::MatmulOrder::gemv);
  std::vector<float> got(64);
  backend->download(got.data(), y.as<const void>(), 64 * 4);
  EXPECT_EQ(got[5], 16.0f);
  ::testing::internal::CaptureStderr();
  backend->close();
  const std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("vulkan profile (" + backend->info().name + ")"), std::string::npos) << report;
  EXPECT_NE(report.find("host waits ("), std::string::npos) << report;
  EXPECT_NE(report.find(" ms blocked)"), std::string::npos) << report;
  // The fills of the allocations, 2 uploads, 3 dispatches, the download's copy: each command's
  // recording counted.
  double recording_ms = -1, per_command_us = -1;
  long long commands = 0;
  const size_t host = report.find("host: ");
  ASSERT_NE(host, std::string::npos) << report;
  EXPECT_EQ(std::sscanf(report.c_str() + host, "host: %lf ms of CPU recording %lld commands (%lf us each)",
                        &recording_ms, &commands, &per_command_us),
            3)
      << report;
  EXPECT_GE(commands, 6) << report;
  EXPECT_GT(recording_ms, 0) << report;
  const size_t line = report.find("matmul_gemv1_f32");
  ASSERT_NE(line, std::string::npos) << report;
  int calls = 0;
  EXPECT_EQ(std::sscanf(report.c_str() + line, "matmul_gemv1_f32 %d", &calls), 1) << report;
  EXPECT_EQ(calls, 3) << report;
  EXPECT_NE(report.find("copy"), std::string::npos) << report;  // the uploads and the download
}

// Profiling: an upload whose copy finds the batch's timestamps full goes to the next batch with
// its staging, the bytes copied from the staging of the batch that runs the copy.
TEST_F(VulkanTest, AnUploadWhenTheProfilesTimestampsAreFullKeepsItsBytes) {
  setenv("DIFFTX_VULKAN_PROFILE", "1", 1);
  const auto backend = open_another({});
  unsetenv("DIFFTX_VULKAN_PROFILE");
  const int64_t n = 4096;
  std::vector<float> x(n);
  std::iota(x.begin(), x.end(), 1.0f);
  DeviceBuffer a = backend->allocate(64), b = backend->allocate(64), y = backend->allocate(n * 4);
  backend->synchronize();  // a new batch: 1024 timestamps, one at its start and one after each command
  for (int i = 0; i < 1023; ++i) backend->copy(b.as<void>(), a.as<const void>(), 64);
  backend->upload(y.as<void>(), x.data(), n * 4);  // its copy: the 1024th command, in the next batch
  for (int round = 0; round < 4; ++round) {        // later uploads reuse the batches' staging
    std::vector<float> other(n, static_cast<float>(-round));
    DeviceBuffer z = backend->allocate(n * 4);
    backend->upload(z.as<void>(), other.data(), n * 4);
    backend->synchronize();
  }
  std::vector<float> got(n);
  backend->download(got.data(), y.as<const void>(), n * 4);
  EXPECT_EQ(got, x);
  ::testing::internal::CaptureStderr();
  backend->close();
  ::testing::internal::GetCapturedStderr();
  for (const std::string& m : backend->validation_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

}  // namespace
}  // namespace difftx
