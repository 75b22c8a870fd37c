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
  head("difftx_requests_total", "counter", "HTTP requests by endpoint and status");
  for (const auto& [key, n] : requests_)
    out << "difftx_requests_total{endpoint=\"" << key.first << "\",status=\"" << key.second << "\"} " << n << "\n";
  head("difftx_prompt_tokens_total", "counter", "prompt tokens of finished requests");
  out << "difftx_prompt_tokens_total " << prompt_tokens_ << "\n";
  head("difftx_generated_tokens_total", "counter", "tokens generated for finished requests");
  out << "difftx_generated_tokens_total " << generated_tokens_ << "\n";
  head("difftx_model_ready", "gauge", "1 once the model is loaded");
  out << "difftx_model_ready " << (s ? 1 : 0) << "\n";
  if (s) {
    head("difftx_queue_length", "gauge", "requests waiting to start");
    out << "difftx_queue_length " << s->waiting << "\n";
    head("difftx_running_sequences", "gauge", "sequences decoding");
    out << "difftx_running_sequences " << s->running << "\n";
    head("difftx_kv_blocks_total", "gauge", "blocks in the KV pool");
    out << "difftx_kv_blocks_total " << s->kv_blocks << "\n";
    head("difftx_kv_blocks_used", "gauge", "KV blocks held by sequences");
    out << "difftx_kv_blocks_used " << s->kv_blocks_used << "\n";
    head("difftx_kv_blocks_cached", "gauge", "KV blocks kept for the prefix cache");
    out << "difftx_kv_blocks_cached " << s->kv_blocks_cached << "\n";
    head("difftx_kv_usage_ratio", "gauge", "share of the KV pool held by sequences");
    out << "difftx_kv_usage_ratio " << (s->kv_blocks ? static_cast<double>(s->kv_blocks_used) / s->kv_blocks : 0.0)
        << "\n";
    head("difftx_prefix_cache_hit_rate", "gauge", "prompt tokens found in the prefix cache / looked up");
    out << "difftx_prefix_cache_hit_rate " << s->prefix_hit_rate() << "\n";
    head("difftx_preemptions_total", "counter", "sequences preempted for KV space");
    out << "difftx_preemptions_total " << s->preemptions << "\n";
    head("difftx_sequences_finished_total", "counter", "engine sequences ended, by reason");
    for (int r = 1; r < 5; ++r)
      out << "difftx_sequences_finished_total{reason=\""
          << infer::finish_reason_name(static_cast<infer::FinishReason>(r)) << "\"} " << s->finished[r] << "\n";
    head("difftx_engine_steps_total", "counter", "engine steps");
    out << "difftx_engine_steps_total " << s->steps << "\n";
    head("difftx_draft_tokens_total", "counter", "speculative decoding: drafted tokens verified");
    out << "difftx_draft_tokens_total " << s->draft_tokens << "\n";
    head("difftx_draft_accepted_tokens_total", "counter", "speculative decoding: drafted tokens accepted");
    out << "difftx_draft_accepted_tokens_total " << s->draft_accepted << "\n";
    head("difftx_draft_acceptance_rate", "gauge", "speculative decoding: accepted / drafted tokens");
    out << "difftx_draft_acceptance_rate " << s->draft_acceptance() << "\n";
  }
  head("difftx_time_to_first_token_seconds", "histogram", "from submission to the first generated token");
  out << ttft_.render("difftx_time_to_first_token_seconds");
  head("difftx_inter_token_latency_seconds", "histogram", "between consecutive generated tokens of a sequence");
  out << itl_.render("difftx_inter_token_latency_seconds");
  return out.str();
}

}  // namespace difftx::serve
