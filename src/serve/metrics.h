// Server metrics in Prometheus' text format: requests by endpoint and status, tokens, the
// engine's queue, running sequences, KV pool and prefix cache, and latency histograms.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "infer/engine.h"

namespace difftx::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // The `name_bucket`, `name_sum` and `name_count` lines.
  std::string render(const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  void count_request(const std::string& endpoint, int status);
  void count_tokens(int64_t prompt, int64_t generated);
  void observe_time_to_first_token(double seconds);
  void observe_inter_token_latency(double seconds);
  // Everything, with the engine's figures (absent while the model loads).
  std::string render(const infer::EngineStats* stats) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  int64_t prompt_tokens_ = 0, generated_tokens_ = 0;
  Histogram ttft_, itl_;
};

}  // namespace difftx::serve
