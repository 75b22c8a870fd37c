// An address in a compute device's memory, typed like a pointer. The CPU backend's memory is the
// host's, so its addresses are host addresses; another device's (backends/vulkan) are its own
// encoding, tagged so that host() refuses them: the model and the engine compute with device
// addresses (offsets, views into arenas) but never read through one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace difftx::backends {

// Addresses with this bit set belong to a device the host cannot read.
constexpr uint64_t kDeviceAddressTag = uint64_t{1} << 63;

[[noreturn]] void throw_host_read_of_device_memory(uint64_t address);

template <typename T>
class DevicePtr {
 public:
  DevicePtr() = default;
  DevicePtr(std::nullptr_t) {}
  // Host memory, as the CPU backend hands out.
  explicit DevicePtr(T* host) : address_(reinterpret_cast<uintptr_t>(host)) {}
  static DevicePtr at(uint64_t address) {
    DevicePtr p;
    p.address_ = address;
    return p;
  }
  // Converts as a pointer would: to const, and to void (keeping const).
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*> && !std::is_same_v<U, T>>>
  DevicePtr(DevicePtr<U> p) : address_(p.address()) {}

  uint64_t address() const { return address_; }
  bool on_host() const { return (address_ & kDeviceAddressTag) == 0; }
  // The host address of memory the host can read (the CPU backend's); an error for a device's.
  T* host() const {
    if (!on_host()) throw_host_read_of_device_memory(address_);
    return reinterpret_cast<T*>(static_cast<uintptr_t>(address_));
  }

  explicit operator bool() const { return address_ != 0; }
  DevicePtr operator+(int64_t n) const { return at(address_ + static_cast<uint64_t>(n) * sizeof(Element)); }
  DevicePtr& operator+=(int64_t n) { return *this = *this + n; }
  friend bool operator==(DevicePtr a, DevicePtr b) { return a.address_ == b.address_; }

 private:
  using Element = std::conditional_t<std::is_void_v<std::remove_const_t<T>>, unsigned char, T>;
  uint64_t address_ = 0;
};

// The same address read as another element type (a reinterpret_cast of device memory).
template <typename To, typename From>
DevicePtr<To> device_cast(DevicePtr<From> p) {
  return DevicePtr<To>::at(p.address());
}

}  // namespace difftx::backends
