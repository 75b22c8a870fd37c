#include "support/vulkan_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/error.h"

namespace difftx::testing {

namespace {

int device_index() {
  const char* device = std::getenv("DIFFTX_TEST_VULKAN_DEVICE");
  return device && *device ? std::atoi(device) : -1;
}

}  // namespace

std::unique_ptr<VulkanTest::Backend> VulkanTest::open_another(backends::vulkan::Options options) {
  options.validation = true;
  options.sync_validation = true;  // the stream's barriers (stream.h) checked against every command's accesses
  return std::make_unique<Backend>(device_index(), options);
}

std::unique_ptr<VulkanTest::Backend> VulkanTest::open_small_bindings() {
  backends::vulkan::Options options;
  options.max_binding_bytes = 4096;
  return open_another(options);
}

void VulkanTest::expect_no_validation_messages(Backend& backend) {
  backend.synchronize();
  for (const std::string& m : backend.validation_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

VulkanTest::Backend* VulkanTest::shared_backend(std::string* why) {
  static std::unique_ptr<Backend> backend;
  static std::string reason;
  static bool tried = false;
  if (!tried) {
    tried = true;
    // Pipeline caches beside the build, not in the user's home.
    setenv("DIFFTX_CACHE_DIR", (std::filesystem::path(DIFFTX_BINARY).parent_path() / "test-cache").c_str(), 0);
    try {
      backend = open_another({});
      if (!backend->context().validation())
        std::cerr << "note: the Vulkan validation layer is not installed (Debian: vulkan-validationlayers); "
                     "the Vulkan tests run without it\n";
    } catch (const Error& e) {
      reason = e.what();
    }
  }
  if (why) *why = reason;
  return backend.get();
}

void VulkanTest::SetUp() {
  std::string why;
  backend_ = shared_backend(&why);
  if (!backend_) GTEST_SKIP() << "no Vulkan device: " << why;
  messages_before_ = backend_->validation_messages().size();
}

void VulkanTest::TearDown() {
  if (!backend_) return;
  backend_->synchronize();
  const auto messages = backend_->validation_messages();
  for (size_t i = messages_before_; i < messages.size(); ++i) ADD_FAILURE() << "Vulkan validation: " << messages[i];
}

}  // namespace difftx::testing
