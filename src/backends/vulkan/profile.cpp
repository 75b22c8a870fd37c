#include "backends/vulkan/profile.h"

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace difftx::backends::vulkan {

bool Profile::wanted() {
  const char* v = std::getenv("DIFFTX_VULKAN_PROFILE");
  return v && std::string(v) == "1";
}

int64_t Profile::thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

void Profile::add(const char* label, double ns) {
  Entry& e = entries_[label];
  ++e.calls;
  e.ns += ns;
}

std::string Profile::report(const std::string& device) const {
  std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  double total = 0;
  int64_t commands = 0;
  for (const auto& [label, e] : rows) {
    total += e.ns;
    commands += e.calls;
  }
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "vulkan profile (%s): %.3f ms of device time, %lld submits, %lld host waits (%.3f ms blocked)\n",
                device.c_str(), total / 1e6, static_cast<long long>(submits_), static_cast<long long>(waits_),
                blocked_ns_ / 1e6);
  out += line;
  std::snprintf(line, sizeof line,
                "  host: %.3f ms of CPU recording %lld commands (%.2f us each), %.3f ms in vkQueueSubmit\n",
                recording_ns_ / 1e6, static_cast<long long>(commands),
                commands > 0 ? recording_ns_ / 1e3 / static_cast<double>(commands) : 0.0, submitting_ns_ / 1e6);
  out += line;
  std::snprintf(line, sizeof line, "  %-28s %10s %12s %10s %7s\n", "command", "calls", "total ms", "mean us", "share");
  out += line;
  for (const auto& [label, e] : rows) {
    std::snprintf(line, sizeof line, "  %-28s %10lld %12.3f %10.2f %6.1f%%\n", label.c_str(),
                  static_cast<long long>(e.calls), e.ns / 1e6, e.ns / 1e3 / static_cast<double>(e.calls),
                  total > 0 ? 100 * e.ns / total : 0.0);
    out += line;
  }
  return out;
}

}  // namespace difftx::backends::vulkan
