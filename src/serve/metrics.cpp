#include "serve/metrics.h"

#include <algorithm>
#include <sstream>

namespace difftx::serve {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

std::string Histogram::render(const std::string& name) const {
  std::ostringstream out;
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out << name << "_bucket{le=\"" << bounds_[i] << "\"} " << cumulative << "\n";
  }
  out << name << "_bucket{le=\"+Inf\"} " << count_ << "\n" << name << "_sum " << sum_ << "\n"
      << name << "_count " << count_ << "\n";
  return out.str();
}

Metrics::Metrics()
    : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}) {}

void Metrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

void Metrics::count_tokens(int64_t prompt, int64_t generated) {
  std::lock_guard lock(mutex_);
  prompt_tokens_ += prompt;
  generated_tokens_ += generated;
}

void Metrics::observe_time_to_first_token(double seconds) {
  std::lock_guard lock(mutex_);
  ttft_.observe(seconds);
}

void Metrics::observe_inter_token_latency(double seconds) {
  std::lock_guard lock(mutex_);
  itl_.observe(seconds);
}

std::string Metrics::render(const infer::EngineStats* s) const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  const auto head = [&](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  };
  const auto metric = [&](const char* name, const char* type, const char* help, const auto& value) {
    head(name, type, help);
    out << name << " " << value << "\n";
  };
  head("difftx_requests_total", "counter", "HTTP requests by endpoint and status");
  for (const auto& [key, n] : requests_)
    out << "difftx_requests_total{endpoint=\"" << key.first << "\",status=\"" << key.second << "\"} " << n << "\n";
  metric("difftx_prompt_tokens_total", "counter", "prompt tokens of finished requests", prompt_tokens_);
  metric("difftx_generated_tokens_total", "counter", "tokens generated for finished requests", generated_tokens_);
  metric("difftx_model_ready", "gauge", "1 once the model is loaded", s ? 1 : 0);
  if (s) {
    metric("difftx_queue_length", "gauge", "requests waiting to start", s->waiting);
    metric("difftx_running_sequences", "gauge", "sequences decoding", s->running);
    metric("difftx_kv_blocks_total", "gauge", "blocks in the KV pool", s->kv_blocks);
    metric("difftx_kv_blocks_used", "gauge", "KV blocks held by sequences", s->kv_blocks_used);
    metric("difftx_kv_blocks_cached", "gauge", "KV blocks kept for the prefix cache", s->kv_blocks_cached);
    metric("difftx_kv_usage_ratio", "gauge", "share of the KV pool held by sequences",
           s->kv_blocks ? static_cast<double>(s->kv_blocks_used) / s->kv_blocks : 0.0);
    metric("difftx_prefix_cache_hit_rate", "gauge", "prompt tokens found in the prefix cache / looked up",
           s->prefix_hit_rate());
    metric("difftx_preemptions_total", "counter", "sequences preempted for KV space", s->preemptions);
    head("difftx_sequences_finished_total", "counter", "engine sequences ended, by reason");
    for (int r = 1; r < 5; ++r)
      out << "difftx_sequences_finished_total{reason=\"" << infer::finish_reason_name(static_cast<infer::FinishReason>(r)) << "\"} "
          << s->finished[r] << "\n";
    metric("difftx_engine_steps_total", "counter", "engine steps", s->steps);
    metric("difftx_draft_tokens_total", "counter", "speculative decoding: drafted tokens verified", s->draft_tokens);
    metric("difftx_draft_accepted_tokens_total", "counter", "speculative decoding: drafted tokens accepted",
           s->draft_accepted);
    metric("difftx_draft_acceptance_rate", "gauge", "speculative decoding: accepted / drafted tokens",
           s->draft_acceptance());
  }
  const auto histogram = [&](const char* name, const char* help, const Histogram& h) {
    head(name, "histogram", help);
    out << h.render(name);
  };
  histogram("difftx_time_to_first_token_seconds", "from submission to the first generated token", ttft_);
  histogram("difftx_inter_token_latency_seconds", "between consecutive generated tokens of a sequence", itl_);
  return out.str();
}

}  // namespace difftx::serve
