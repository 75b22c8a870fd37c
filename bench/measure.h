// Benchmark helpers: time a function robustly and print results as text or JSON lines.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace difftx::bench {

struct Timing {
  double best_ms;
  double median_ms;
  int runs;
};

// CPU seconds used so far by the whole process (every thread, user and system). For a
// one-thread run it is the work itself, unlike wall time, which grows while other processes
// hold the core; with more threads it also counts OpenMP threads spinning at barriers.
double process_cpu_seconds();

// Runs fn once to warm up, then repeatedly for at least min_seconds (and min_runs times).
Timing measure(const std::function<void()>& fn, double min_seconds = 0.5, int min_runs = 3);

// One result line. With json=true prints {"op":...,"key":value,...}; else aligned text.
struct Field {
  std::string key;
  std::string text;  // already formatted
  bool quoted;       // JSON string (true) or number (false)
};
Field str(const std::string& key, const std::string& value);
Field num(const std::string& key, double value, int decimals = 2);
void print_row(bool json, const std::vector<Field>& fields);

}  // namespace difftx::bench
