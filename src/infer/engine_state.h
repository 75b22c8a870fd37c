// The engine's internal state (infer/engine.h): the sequences, the KV pool and the batched
// forward; engine.cpp takes requests in, engine_step.cpp schedules and runs a step.
#pragma once
#include <deque>
#include <memory>
#include <vector>

#include "infer/batch_forward.h"
#include "infer/engine.h"
#include "infer/kv_pool.h"
#include "infer/stop_text.h"

namespace difftx {

// A request in the engine: its tokens so far and where their keys and values are.
struct Sequence {
  Sequence(Engine::RequestId id_, Request r, int64_t vocab)
      : id(id_),
        request(std::move(r)),
        tokens(request.prompt),
        prompt_tokens(static_cast<int64_t>(tokens.size())),
        sampler(request.options.sampling, vocab),
        text(request.options.stop_strings),
        constraint(request.options.constraint ? request.options.constraint->start(request.options.stop_tokens)
                                              : nullptr) {}

  Engine::RequestId id;
  Request request;
  std::vector<int32_t> tokens;  // the prompt, then every generated token
  int64_t prompt_tokens;
  int64_t computed = 0;         // leading tokens whose keys and values are in `blocks`
  std::vector<int32_t> blocks;  // the block table: position p is in blocks[p / block_tokens]
  int64_t registered = 0;       // leading blocks in the prefix cache (registered or found there)
  uint64_t chain = 0;           // the prefix cache key of block registered - 1
  int64_t cached_tokens = 0;    // prompt tokens found in the prefix cache on first admission
  bool admitted = false;
  bool scheduled = false;       // has rows in the step being scheduled
  Sampler sampler;
  StopText text;
  std::unique_ptr<TokenConstraint> constraint;  // none: any token

  int64_t pending() const { return static_cast<int64_t>(tokens.size()) - computed; }
  int64_t generated() const { return static_cast<int64_t>(tokens.size()) - prompt_tokens; }
};

struct Engine::State {
  State(const Model& model, const EngineOptions& o, int64_t blocks, int64_t context_)
      : pool(model.config, o.kv, o.kv_block_tokens, blocks),
        forward(model, pool, o.max_batch_tokens, context_),
        context(context_) {}

  KvPool pool;
  BatchForward forward;
  int64_t context;    // most tokens a sequence holds
  int64_t vocab = 0;  // ids that may be drawn
  RequestId next_id = 1;
  // Shared with submit() and cancel(), under the engine's mutex.
  std::deque<std::unique_ptr<Sequence>> incoming;
  std::vector<RequestId> cancels;
  EngineStats stats;  // the snapshot stats() returns
  // The engine thread's own.
  std::deque<std::unique_ptr<Sequence>> waiting;  // first come first; a preempted sequence goes first
  std::vector<std::unique_ptr<Sequence>> running;  // in admission order
  EngineStats counters;
};

}  // namespace difftx
