// The conformance suite's plumbing: the backends under test (every CPU level this machine runs,
// and every other device it has: a backend registered in backends/registry.cpp gets the suite by
// being there), and arrays moved to and from a backend's memory.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/rng.h"
#include "kernels/attention/attention.h"

namespace difftx::testing {

// Host memory as the CPU backend addresses it (its device addresses are host addresses).
template <typename T>
backends::DevicePtr<T> host_ptr(T* p) {
  return backends::DevicePtr<T>(p);
}

// A CPU level's backend is at hand; another device is opened by the first test that uses it, not
// when the suite is listed: every test process lists it, and opening a Vulkan device took ~0.3 s.
struct BackendUnderTest {
  std::string name;                         // "cpu_avx512", "vulkan0"
  backends::Backend* level_backend = nullptr;  // a CPU level's
  std::string device;                       // otherwise: the device's name ("vulkan:0")
  backends::Backend& backend() const { return level_backend ? *level_backend : backends::open_backend(device); }
};
std::vector<BackendUnderTest> backends_under_test();
// backends::device_names(), listed once per process: every test process builds the parameters of
// every suite, whatever its filter, and each listing starts a Vulkan instance.
const std::vector<std::string>& devices_here();
std::string backend_test_name(const ::testing::TestParamInfo<BackendUnderTest>& info);
inline void PrintTo(const BackendUnderTest& b, std::ostream* out) { *out << b.name; }

// A host vector's copy in a backend's memory.
template <typename T>
class DeviceArray {
 public:
  DeviceArray(backends::Backend& b, const std::vector<T>& host)
      : backend_(b), size_(static_cast<int64_t>(host.size())), buffer_(b.allocate(bytes(), true)) {
    b.upload(buffer_.as<void>(), host.data(), size_ * int64_t{sizeof(T)});
  }
  DeviceArray(backends::Backend& b, int64_t n) : backend_(b), size_(n), buffer_(b.allocate(bytes(), true)) {}

  backends::DevicePtr<T> ptr() const { return buffer_.as<T>(); }
  operator backends::DevicePtr<T>() const { return ptr(); }
  operator backends::DevicePtr<const T>() const { return ptr(); }
  std::vector<T> read() const {
    std::vector<T> out(size_);
    backend_.download(out.data(), buffer_.as<const void>(), size_ * int64_t{sizeof(T)});
    return out;
  }

 private:
  int64_t bytes() const { return std::max<int64_t>(size_, 1) * int64_t{sizeof(T)}; }
  backends::Backend& backend_;
  int64_t size_;
  backends::DeviceBuffer buffer_;
};

// The fixture of every conformance test: GetParam() is the backend.
class Conformance : public ::testing::TestWithParam<BackendUnderTest> {
 protected:
  backends::Backend& backend() const { return GetParam().backend(); }
  template <typename T>
  DeviceArray<T> on_device(const std::vector<T>& host) const {
    return DeviceArray<T>(backend(), host);
  }
  template <typename T>
  DeviceArray<T> zeros(int64_t n) const {
    return DeviceArray<T>(backend(), n);
  }
};

// Every element of a backend's `got` within atol + rtol |want| of the double reference; the
// failure names `what` and the first mismatch.
void expect_near(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol,
                 const std::string& what);

// Random lambdas for a variant over `rows` tokens: a scalar in [0.2, 0.8] (DIFF V1, grouped), a
// logit in [-2, 2] per token and head (V2), none (baseline).
std::vector<float> random_lambda(const kernels::AttentionVariant& v, int64_t rows, Rng& rng);

}  // namespace difftx::testing
