#include "measure.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "core/timer.h"
#include "backends/cpu/cpu_level.h"

namespace difftx::bench {

double process_cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

Timing measure(const std::function<void()>& fn, double min_seconds, int min_runs) {
  fn();  // warm-up: page faults, caches, thread pool start
  std::vector<double> ms;
  Timer total;
  while (static_cast<int>(ms.size()) < min_runs || total.seconds() < min_seconds) {
    Timer t;
    fn();
    ms.push_back(t.ms());
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2], static_cast<int>(ms.size())};
}

Field str(const std::string& key, const std::string& value) { return {key, value, true}; }

Field num(const std::string& key, double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return {key, buf, false};
}

void print_row(bool json, const std::vector<Field>& given) {
  std::vector<Field> fields = given;
  fields.push_back(str("cpu", cpu_level_name(cpu_level())));  // the kernels' level (kernels/cpu_level.h)
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    if (json) {
      line += (i ? "," : "{");
      line += "\"" + f.key + "\":" + (f.quoted ? "\"" + f.text + "\"" : f.text);
    } else {
      line += (i ? "  " : "") + f.key + "=" + f.text;
    }
  }
  if (json) line += "}";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace difftx::bench
