// The Vulkan backend under test: the machine's best Vulkan device (lavapipe in CI;
// DIFFTX_TEST_VULKAN_DEVICE=N picks vulkan:N), opened once per test process with the
// validation layer on. Tests skip, saying why, where there is no Vulkan device; a validation
// message during a test fails it.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_backend.h"

namespace difftx::testing {

class VulkanTest : public ::testing::Test {
 protected:
  using Backend = backends::vulkan::VulkanBackend;
  // The process's backend, or null (with the reason in *why) when there is no device.
  static Backend* shared_backend(std::string* why);

  void SetUp() override;
  void TearDown() override;
  Backend& vk() { return *backend_; }
  // Another backend on the same device with these options, the validation layer on; and the
  // check that it said nothing (after its work has finished).
  static std::unique_ptr<Backend> open_another(backends::vulkan::Options options);
  static void expect_no_validation_messages(Backend& backend);
  // One that binds at most 4 KiB at once: every op's window path on small data.
  static std::unique_ptr<Backend> open_small_bindings();

  // Host vectors in and out of device memory.
  template <typename T>
  backends::DeviceBuffer to_device(const std::vector<T>& host) {
    backends::DeviceBuffer b = backend_->allocate(static_cast<int64_t>(host.size() * sizeof(T)) + 16);
    backend_->upload(b.as<void>(), host.data(), static_cast<int64_t>(host.size() * sizeof(T)));
    return b;
  }
  template <typename T>
  std::vector<T> to_host(const backends::DeviceBuffer& b, int64_t n) {
    std::vector<T> host(n);
    backend_->download(host.data(), b.as<const void>(), n * static_cast<int64_t>(sizeof(T)));
    return host;
  }

 private:
  Backend* backend_ = nullptr;
  size_t messages_before_ = 0;
};

}  // namespace difftx::testing
