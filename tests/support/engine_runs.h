// Running the engine from tests: the logits of a prompt and a forced continuation through the
// decode path, and a request's whole stream.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "infer/engine.h"

namespace difftx::testing {

// Row i (of forced.size() + 1, each [vocab_size]) holds the next-token logits after prompt and
// forced[0, i): the prompt prefilled, each forced token then fed back as a generated token.
std::vector<float> engine_logits(const model::Model& model, std::span<const int32_t> prompt,
                                 std::span<const int32_t> forced, kernels::KvStorage kv = kernels::KvStorage::f32,
                                 infer::EngineOptions options = {});

// A forward for the engine (Engine's StepForward) that gives each row asking for logits
// logits_of(its token), each of the same length: the model replaced by a table.
infer::StepForward forward_by_token(std::function<std::vector<float>(int32_t token)> logits_of);

struct Stream;
// A greedy request for `prompt` (at most 8 tokens, then `change` setting its options) on a fresh
// engine (`options`) whose model is the table logits_of (forward_by_token), over its rows' ids.
Stream run_on_table(std::function<std::vector<float>(int32_t token)> logits_of, std::vector<int32_t> prompt,
                    const std::function<void(infer::RequestOptions&)>& change, infer::EngineOptions options = {});

// Everything a request streamed.
struct Stream {
  std::vector<infer::TokenEvent> events;
  std::vector<int32_t> ids() const;
  std::vector<float> logprobs() const;
  std::string text() const;
  infer::FinishReason finish() const { return events.empty() ? infer::FinishReason::none : events.back().finish; }
};

// Submits the request with a callback that records into `out` (kept alive by the caller).
infer::Engine::RequestId submit_recorded(infer::Engine& engine, infer::Request request, Stream& out);

// Fails the test unless the streams hold the same tokens, the same logprobs and top logprobs bit
// for bit, and the same finish; `what` names the case.
void expect_same_stream(const Stream& got, const Stream& want, const std::string& what);

}  // namespace difftx::testing
