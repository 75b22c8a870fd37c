// DIFFTX_VULKAN_PROFILE=1: the device's time per shader (and per copy and fill), read from a
// timestamp written after every command of the stream, with the host's waits counted; printed
// to stderr when the backend closes. A profiled stream puts a barrier before every command, so the
// time between two timestamps is the later command's. The host's side beside the device's total
// says which side a run waits on and where the host's time goes: its time blocked in fence
// waits, its CPU time recording commands (descriptor sets, barriers, the command itself: difftx's
// work and the driver's) and its time in vkQueueSubmit.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace difftx::backends::vulkan {

class Profile {
 public:
  // Whether DIFFTX_VULKAN_PROFILE=1 asks for one.
  static bool wanted();

  void add(const char* label, double ns);
  void count_wait() { ++waits_; }
  void add_blocked(double ns) { blocked_ns_ += ns; }  // the host's time in fence waits
  void count_submit() { ++submits_; }
  void add_recording(double ns) { recording_ns_ += ns; }    // the host thread's CPU time recording a command
  void add_submitting(double ns) { submitting_ns_ += ns; }  // the host's time in vkQueueSubmit
  static int64_t thread_cpu_ns();
  // One line per label, the largest total first: calls, total ms, mean us, share of the total.
  std::string report(const std::string& device) const;

 private:
  struct Entry {
    int64_t calls = 0;
    double ns = 0;
  };
  std::map<std::string, Entry> entries_;
  int64_t waits_ = 0, submits_ = 0;
  double blocked_ns_ = 0, recording_ns_ = 0, submitting_ns_ = 0;
};

}  // namespace difftx::backends::vulkan
