// The Vulkan backend's registration: the device names it answers to, opening one, and the
// listing of this machine's Vulkan devices for `difftx --version`.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace difftx::backends::vulkan {

// "vulkan" (the best device: a discrete GPU first) or "vulkan:N" (list_devices()' N-th).
bool names_vulkan(const std::string& device);
// The backend of that device, opened once and kept for the process ("vulkan" and the vulkan:N
// it chose are one backend). Error naming what is missing when there is no Vulkan loader,
// driver or such device (never a fall-back to another device). DIFFTX_VULKAN_VALIDATION=1 turns
// the validation layer on, its messages on stderr as they come ("difftx: vulkan validation error: ...").
Backend& open_device(const std::string& device);
// "vulkan:0", "vulkan:1", ... for this machine's devices; none without a loader or driver.
std::vector<std::string> device_names();
// One line per device: "vulkan:0 llvmpipe (LLVM 15.0.6, 256 bits): 15.6 GiB, CPU, Vulkan 1.3.230, ...",
// or one line saying why there is none.
std::vector<std::string> device_listing();

}  // namespace difftx::backends::vulkan
