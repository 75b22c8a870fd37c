#include "support/backend_case.h"

#include <cctype>

#include "backends/cpu/cpu_backend.h"

namespace difftx::testing {

// Listed once per process (each suite's instantiation asks): listing the devices starts a Vulkan instance.
std::vector<BackendUnderTest> backends_under_test() {
  static const std::vector<BackendUnderTest> all = [] {
    std::vector<BackendUnderTest> list;
    for (CpuLevel level : cpu_levels_runnable())
      list.push_back({std::string("cpu_") + cpu_level_name(level), &backends::cpu::level_backend(level), ""});
    for (const std::string& device : backends::device_names()) {
      if (device == "cpu") continue;
      std::string name;
      for (char c : device)
        if (std::isalnum(static_cast<unsigned char>(c))) name += c;
      list.push_back({name, nullptr, device});
    }
    return list;
  }();
  return all;
}

std::string backend_test_name(const ::testing::TestParamInfo<BackendUnderTest>& info) { return info.param.name; }

}  // namespace difftx::testing
