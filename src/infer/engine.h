// The continuous-batching inference engine: one loaded model, one paged KV block pool
// (kv_pool.h) and a scheduler. Requests are submitted from any thread; each step runs every
// layer once over a batch of rows - the next token of every running sequence plus chunks of
// waiting prompts under a token budget - with the projections and the MLP as one product over
// all rows and attention per row against its sequence's cached keys and values.
//
// Batch invariance (docs/ARCHITECTURE.md, "The engine"): a request's tokens and logprobs are
// bit-identical whether it runs alone or beside others, with or without a cached prefix, however
// its prompt is chunked. Every kernel's reduction order for a row is fixed by the row alone:
// rows of prompt tokens follow the prefill GEMM's order, rows of generated tokens the decode
// GEMV's (MatmulOrder, matmul.h), attention is the single-query kernel for every row, and a
// preempted sequence's generated tokens are recomputed in the order they were made with.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/option_name.h"
#include "infer/reasoning_block.h"
#include "infer/sampler.h"
#include "infer/token_constraint.h"
#include "kernels/attention/decode_attention.h"
#include "model/model.h"

namespace difftx::data {
class Tokenizer;
}

namespace difftx::infer {

struct StepPlan;

enum class FinishReason { none, stop, length, cancelled, error };

// Speculative decoding: where a sequence's drafted tokens come from (infer/drafter.h). Drafted
// tokens are verified as extra rows of one step; the output is the same as without a draft
// (greedy: bit-identical; sampled: the same distribution).
enum class DraftMode {
  none,
  ngram,  // prompt lookup (infer/ngram_drafter.h)
  model,  // a smaller model with the same vocabulary (EngineOptions::draft_model)
};
const char* draft_mode_name(DraftMode mode);  // "none", "ngram", "model"
constexpr int64_t kDefaultDraftTokens = 6;
constexpr int64_t kMaxDraftTokens = 64;
const char* finish_reason_name(FinishReason reason);  // "stop", "length", "cancelled", "error"

struct TokenLogprob {
  int32_t id;
  float logprob;
};

// A prompt token's log-probability after the tokens before it (vLLM's prompt_logprobs): its rank
// among the ids (1: the likeliest; 1 + the ids with a higher logit) and the likeliest ids there.
struct PromptTokenLogprob {
  float logprob = 0;
  int64_t rank = 0;
  std::vector<TokenLogprob> top;  // RequestOptions::prompt_logprobs of them, most likely first
};

// What a request streams: one event per generated token; the last event has finish set (and
// may carry no token: id -1, e.g. after a stop token or a cancel).
struct TokenEvent {
  int32_t id = -1;
  std::string text;      // text this token completes (a multi-byte character or a possible stop
                         // string is held back until it is settled; a stop string never appears)
  float logprob = 0;     // log p(id) under the model's distribution (raw logits, before sampling);
                         // with RequestOptions::logprobs
  std::vector<TokenLogprob> top;  // the top_logprobs most likely tokens, most likely first
  // With RequestOptions::prompt_logprobs, on the request's first event: prompt tokens 1 to n - 1
  // in order (the first token has no logprob: nothing comes before it).
  std::vector<PromptTokenLogprob> prompt_logprobs;
  FinishReason finish = FinishReason::none;
  std::string stop_string;  // with FinishReason::stop: the stop string that ended the text, if one did
  int32_t stop_token = -1;  // with FinishReason::stop: the stop token drawn (not streamed), if one ended it
  std::string error;     // the message, for FinishReason::error
  // On the last event (prompt_tokens and cached_tokens on the first too, as admitted).
  // generated_tokens counts a stop token that ended the request (not streamed), as OpenAI's and
  // vLLM's usage count the end-of-sequence token.
  int64_t prompt_tokens = 0, generated_tokens = 0, cached_tokens = 0;
};

struct RequestOptions {
  SamplingOptions sampling;  // temperature, top-k, top-p, min-p, seed, penalties
  int64_t max_new_tokens = 128;
  // vLLM's min_tokens, in [0, max_new_tokens]: the first min_tokens tokens are never stop tokens
  // (they are masked), and stop strings are looked for once that many tokens are out.
  int64_t min_tokens = 0;
  std::vector<int32_t> stop_tokens;      // ends with `stop` when drawn (not streamed)
  std::vector<std::string> stop_strings; // ends with `stop` when the text contains one (cut before it)
  bool include_stop_str = false;         // cut after it instead (vLLM's include_stop_str_in_output)
  // vLLM's bad_words as token sequences (infer/bad_words.h): the last token of one is never drawn
  // where the generated tokens end with its others. At most kMaxBadWords, each of 1 to
  // kMaxBadWordTokens ids.
  std::vector<std::vector<int32_t>> bad_words;
  // A reasoning block the output may open with (infer/reasoning_block.h): stop strings are matched
  // only in the text after it, as vLLM skips them in reasoning content.
  std::optional<ReasoningBlock> reasoning;
  // Tokens drawn as any other but that write no text (TokenEvent::text, and what stop strings
  // are matched against), ascending: the special tokens a server leaves out of a reply, as
  // vLLM's skip_special_tokens.
  std::vector<int32_t> silent_tokens;
  // Tokens taken in turn instead of drawn (the sampler still counts them for its penalties):
  // scoring a given continuation through the decode path, with each token's logprob.
  std::vector<int32_t> forced;
  bool logprobs = false;                 // fill TokenEvent::logprob (top_logprobs > 0 implies it)
  int top_logprobs = 0;                  // alternatives per token, [0, kMaxTopLogprobs]
  // Score the prompt (TokenEvent::prompt_logprobs), with this many alternatives per token, [0,
  // kMaxTopLogprobs]. Its every position is then computed (no cached prefix is taken), and
  // max_new_tokens may be 0: the request ends with `length` once its prompt is scored.
  std::optional<int> prompt_logprobs;
  // Which tokens may be drawn (infer/token_constraint.h): a grammar, a reasoning budget. The
  // request also ends with `stop` when the constraint says nothing may follow.
  std::shared_ptr<const TokenConstraintSource> constraint;
  // Speculative decoding for this request: unset takes the engine's (EngineOptions::draft);
  // draft_tokens 0 takes the engine's count, else the most tokens drafted per step, [1, kMaxDraftTokens].
  std::optional<DraftMode> draft;
  int64_t draft_tokens = 0;
};
constexpr int kMaxTopLogprobs = 20;
constexpr int kMaxStopStrings = 16;  // most stop strings a request holds
constexpr int kMaxStopTokenIds = 64;  // most ids a caller adds to a model's stop ids (vLLM's stop_token_ids)
constexpr int kMaxBadWords = 128, kMaxBadWordTokens = 64;

struct Request {
  std::vector<int32_t> prompt;  // at least one token, each in [0, vocab_size)
  RequestOptions options;
  // Called on the engine's thread, in order, never after the event with finish set. Keep it
  // short, and do not throw (cancel() from inside it is fine).
  std::function<void(const TokenEvent&)> on_event;
  // Optional: the raw next-token logits [vocab_size] each time the request draws a token (before
  // on_event), on the engine's thread; valid during the call.
  std::function<void(std::span<const float>)> on_logits;
};

struct EngineOptions {
  kernels::KvStorage kv = kernels::KvStorage::bf16;
  int64_t kv_block_tokens = 32;   // tokens per KV block, a multiple of 16
  int64_t kv_tokens = 0;          // pool capacity: the positions one sequence may hold (sequence_blocks); 0: kv_bytes
  int64_t kv_bytes = 0;           // pool capacity in bytes; 0 (and kv_tokens 0): max_position_embeddings tokens, at most 1 GiB
                                  // and at most what the device's paged attention takes (Backend::max_paged_kv_regions)
  int64_t max_batch_tokens = 512; // rows per step (decode rows + prompt chunks)
  int64_t max_running = 64;       // sequences decoding at once
  int64_t max_queue = 1024;       // requests waiting beyond that; more are refused (EngineFull)
  int64_t context = 0;            // most tokens of a sequence (prompt + generated); 0: max_position_embeddings
  bool prefix_cache = true;       // reuse full KV blocks of matching prompt prefixes
  int64_t sample_vocab = 0;       // ids that may be drawn, [0, sample_vocab); 0: vocab_size
  // Speculative decoding (DraftMode): the requests' default, the most tokens drafted per step,
  // and the draft model (same vocab_size, outlives the engine) that DraftMode::model needs.
  DraftMode draft = DraftMode::none;
  int64_t draft_tokens = kDefaultDraftTokens;
  const model::Model* draft_model = nullptr;
  // How the engine's errors name these options: the fields (the C API's, Python's), or the CLI's
  // flags where the options came from flags.
  OptionSpelling spelling = OptionSpelling::field;
};

// The most tokens of a sequence: `context`, 0 meaning max_position_embeddings; an error beyond
// that names the option "context" as `spelling` writes it.
int64_t sequence_context(int64_t context, const model::ModelConfig& config, OptionSpelling spelling);

struct EngineStats {
  int64_t waiting = 0, running = 0;
  int64_t kv_blocks = 0, kv_blocks_used = 0, kv_blocks_cached = 0;  // used: referenced by a sequence
  int64_t kv_block_tokens = 0;
  const char* prefix_cache = "on";  // prefix_cache_name: "on", "off (option)", or off for recurrent state
  int64_t prefix_lookup_tokens = 0, prefix_hit_tokens = 0;  // prompt tokens looked up / found cached
  // So far: prompt tokens computed (re-prefill included), tokens drawn (a stop token too).
  int64_t prompt_tokens = 0, generated_tokens = 0;
  int64_t preemptions = 0, steps = 0;
  // Drafted tokens (each accepted or rejected; not those after a token that ended the request,
  // which were never to be verified) / of those, the ones the target drew.
  int64_t draft_tokens = 0, draft_accepted = 0;
  int64_t finished[5] = {};  // by FinishReason
  double prefix_hit_rate() const {
    return prefix_lookup_tokens ? static_cast<double>(prefix_hit_tokens) / prefix_lookup_tokens : 0.0;
  }
  double draft_acceptance() const { return draft_tokens ? static_cast<double>(draft_accepted) / draft_tokens : 0.0; }
};

// What runs a step's rows (infer/scheduler.h): returns their logits [rows that want them,
// vocab_size] in row order, valid until the next call.
using StepForward = std::function<const float*(const StepPlan&)>;

// The queue is full: the request was not taken (a server answers 503).
struct EngineFull : Error {
  using Error::Error;
};

class Engine {
 public:
  using RequestId = uint64_t;
  // The model (and tokenizer, which may be null: then events carry no text and stop strings are
  // an error) must outlive the engine. Bad options are errors naming the option.
  Engine(const model::Model& model, const data::Tokenizer* tokenizer, const EngineOptions& options = {});
  // The same, with each step's rows run by `forward` instead of the model (a test double that
  // returns chosen logits; the model still gives the shapes).
  Engine(const model::Model& model, const data::Tokenizer* tokenizer, const EngineOptions& options,
         StepForward forward);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request. Bad requests (empty prompt, an id outside the vocabulary, a prompt longer
  // than the context - naming both lengths -, bad sampling options) are Error; a full queue is
  // EngineFull. Thread-safe.
  RequestId submit(Request request);
  // Ends a request at the next step with FinishReason::cancelled (its blocks freed); an unknown
  // or finished id is ignored, and so is an id not yet handed out (it never cancels a later
  // request). Thread-safe.
  void cancel(RequestId id);

  // Runs one step on the calling thread: false when no request is waiting or running.
  bool step();
  // Runs steps on the calling thread until no request is waiting or running.
  void run_until_idle();
  // Or a background thread that runs steps whenever there is work (for a server); stop() ends
  // every request still there with `cancelled` and joins it.
  void start();
  void stop();

  EngineStats stats() const;
  const model::Model& model() const { return model_; }
  const EngineOptions& options() const { return options_; }
  int64_t context() const;  // most tokens a sequence may hold (prompt + generated)

  struct State;  // internal: infer/engine_state.h

 private:
  void loop();
  // Ends every request with FinishReason::error and this message (a step that threw).
  void fail_all(const std::string& why);
  // Under the mutex: the snapshot stats() returns, from the engine thread's state; whether any
  // request is still waiting or running (or a cancel pending).
  bool publish_stats();

  const model::Model& model_;
  const data::Tokenizer* tokenizer_;
  EngineOptions options_;
  std::unique_ptr<State> state_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::thread thread_;
  bool stopping_ = false;
};

}  // namespace difftx::infer
