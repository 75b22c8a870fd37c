#include "support/engine_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "infer/scheduler.h"
#include "support/random_model.h"

namespace difftx::testing {

std::vector<float> engine_logits(const model::Model& model, std::span<const int32_t> prompt,
                                 std::span<const int32_t> forced, kernels::KvStorage kv, infer::EngineOptions options) {
  options.kv = kv;
  infer::Engine engine(model, nullptr, options);
  std::vector<float> out;
  infer::Request r{std::vector<int32_t>(prompt.begin(), prompt.end()), {}, {}, {}};
  r.options.sampling.temperature = 0;
  r.options.forced.assign(forced.begin(), forced.end());
  r.options.max_new_tokens = static_cast<int64_t>(forced.size()) + 1;
  r.on_logits = [&](std::span<const float> logits) { out.insert(out.end(), logits.begin(), logits.end()); };
  engine.submit(std::move(r));
  engine.run_until_idle();
  return out;
}

std::vector<int32_t> Stream::ids() const {
  std::vector<int32_t> out;
  for (const infer::TokenEvent& e : events)
    if (e.id >= 0) out.push_back(e.id);
  return out;
}

std::vector<float> Stream::logprobs() const {
  std::vector<float> out;
  for (const infer::TokenEvent& e : events)
    if (e.id >= 0) out.push_back(e.logprob);
  return out;
}

std::string Stream::text() const {
  std::string out;
  for (const infer::TokenEvent& e : events) out += e.text;
  return out;
}

infer::Engine::RequestId submit_recorded(infer::Engine& engine, infer::Request request, Stream& out) {
  request.on_event = [&out](const infer::TokenEvent& e) { out.events.push_back(e); };
  return engine.submit(std::move(request));
}

void expect_same_stream(const Stream& got, const Stream& want, const std::string& what) {
  ASSERT_EQ(got.ids(), want.ids()) << what;
  const std::vector<float> a = got.logprobs(), b = want.logprobs();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << ": logprob " << i << " differs";
  for (size_t i = 0; i < got.events.size(); ++i)
    for (size_t k = 0; k < got.events[i].top.size(); ++k) {
      ASSERT_EQ(got.events[i].top[k].id, want.events[i].top[k].id) << what;
      ASSERT_EQ(got.events[i].top[k].logprob, want.events[i].top[k].logprob) << what;
    }
  EXPECT_EQ(got.finish(), want.finish()) << what;
}

infer::StepForward forward_by_token(std::function<std::vector<float>(int32_t token)> logits_of) {
  auto logits = std::make_shared<std::vector<float>>();
  return [logits, logits_of = std::move(logits_of)](const infer::StepPlan& plan) {
    logits->clear();
    for (const infer::BatchRow& r : plan.rows)
      if (r.logits) {
        const std::vector<float> row = logits_of(r.token);
        logits->insert(logits->end(), row.begin(), row.end());
      }
    return static_cast<const float*>(logits->data());
  };
}

Stream run_on_table(std::function<std::vector<float>(int32_t token)> logits_of, std::vector<int32_t> prompt,
                    const std::function<void(infer::RequestOptions&)>& change, infer::EngineOptions options) {
  const auto vocab = static_cast<int64_t>(logits_of(0).size());
  const model::Model model = random_model(engine_config(kernels::AttentionKind::baseline, 64, vocab, 256), 1);
  infer::Engine engine(model, nullptr, options, forward_by_token(std::move(logits_of)));
  infer::Request r{std::move(prompt), {}, {}, {}};
  r.options.max_new_tokens = 8;
  r.options.sampling.temperature = 0;
  change(r.options);
  Stream out;
  submit_recorded(engine, r, out);
  engine.run_until_idle();
  return out;
}

}  // namespace difftx::testing
