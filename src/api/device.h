// The device a model runs on, named by a string at the API's edge (the C API's
// difftx_model_load, the Python module's load): the one place device names are read.
#pragma once
#include <string>

namespace difftx::api {

enum class Device { cpu };

// Null or "cpu": the CPU (the kernels of the CPU level in use, kernels/cpu_level.h). Any
// other name is an error naming it and the devices this build runs.
Device parse_device(const char* name);
const char* device_name(Device device);

}  // namespace difftx::api
