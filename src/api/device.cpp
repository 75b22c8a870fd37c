#include "api/device.h"

#include <cstring>

#include "core/error.h"

namespace difftx::api {

Device parse_device(const char* name) {
  if (name == nullptr || std::strcmp(name, "cpu") == 0) return Device::cpu;
  fail("device '", std::string(name).substr(0, 64), "': this build runs on 'cpu' only");
}

const char* device_name(Device device) {
  switch (device) {
    case Device::cpu: return "cpu";
  }
  return "cpu";
}

}  // namespace difftx::api
