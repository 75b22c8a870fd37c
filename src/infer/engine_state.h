// The engine's internal state (infer/engine.h): the KV pool and its manager, the scheduler, the
// forward (a hybrid stack's with its state pool) and the sampling stage; engine.cpp takes
// requests in, engine_step.cpp runs a step.
#pragma once
#include <deque>
#include <memory>
#include <vector>

#include "infer/batch_forward.h"
#include "infer/engine.h"
#include "infer/hybrid_forward.h"
#include "infer/kv_cache_manager.h"
#include "infer/kv_pool.h"
#include "infer/model_drafter.h"
#include "infer/ngram_drafter.h"
#include "infer/sampling_stage.h"
#include "infer/scheduler.h"
#include "infer/sequence.h"
#include "infer/state_pool.h"

namespace difftx::infer {

struct Engine::State {
  // vocab: the ids that may be drawn; forward: null for the model's own (BatchForward).
  State(const model::Model& model, const data::Tokenizer* tokenizer, const EngineOptions& o, int64_t blocks,
        int64_t context_, int64_t vocab_, StepForward step_forward)
      : pool(*model.backend, model.config, o.kv, o.kv_block_tokens, blocks, o.spelling),
        kv(kv_cache_groups(model.config), pool, state_slots(model.config, o), o.prefix_cache),
        scheduler(kv, o.max_batch_tokens, o.max_running, scored_rows(model.config), counters),
        sampling(tokenizer, vocab_, model.config.vocab_size, context_, counters),
        forward(std::move(step_forward)),
        context(context_),
        vocab(vocab_) {
    if (o.draft_model)
      model_drafter = std::make_unique<ModelDrafter>(*o.draft_model, vocab, o.kv, blocks * o.kv_block_tokens,
                                                            context, o.max_batch_tokens, o.spelling);
    if (forward) return;
    if (model.config.hybrid) {  // a state slot per running sequence (the manager's recurrent group)
      states = std::make_unique<StatePool>(*model.backend, model.config, state_slots(model.config, o), o.spelling);
      hybrid_forward =
          std::make_unique<HybridForward>(model, pool, *states, kv.groups(), o.max_batch_tokens, context);
      forward = [f = hybrid_forward.get()](const StepPlan& plan) { return f->run(plan); };
      return;
    }
    model_forward = std::make_unique<BatchForward>(model, pool, o.max_batch_tokens, context);
    forward = [f = model_forward.get()](const StepPlan& plan) {
      return f->run(plan.rows, plan.gemv_rows, plan.tables[0]);
    };
  }

  // The most rows of scored prompts in one step: their logits [rows, vocab_size] within 64 MiB.
  static int64_t scored_rows(const model::ModelConfig& c) {
    return std::max<int64_t>(1, (int64_t{64} << 20) / (c.vocab_size * int64_t{sizeof(float)}));
  }

  // A hybrid stack's state slots: one per running sequence, and one per drafted token of a step
  // (kv_cache_manager.h's lookahead slots) - of every running sequence when the engine drafts by
  // default, else of one sequence at the engine's draft count (a request whose drafts find no free
  // slots decodes that step without them). Its pages are written only when taken (state_pool.h).
  static int64_t state_slots(const model::ModelConfig& c, const EngineOptions& o) {
    if (!c.hybrid) return 0;
    return o.max_running + (o.draft == DraftMode::none ? 1 : o.max_running) * o.draft_tokens;
  }

  EngineStats counters;  // the engine thread's own
  KvPool pool;
  KvCacheManager kv;
  Scheduler scheduler;
  SamplingStage sampling;
  std::unique_ptr<BatchForward> model_forward;            // docs/SPEC.md's decoder
  std::unique_ptr<StatePool> states;               // a hybrid stack's Mamba states
  std::unique_ptr<HybridForward> hybrid_forward;  // and its forward
  StepForward forward;
  NgramDrafter ngram_drafter;
  std::unique_ptr<ModelDrafter> model_drafter;  // with EngineOptions::draft_model
  int64_t context;  // most tokens a sequence holds
  int64_t vocab;    // ids that may be drawn
  RequestId next_id = 1;
  // Shared with submit() and cancel(), under the engine's mutex.
  std::deque<std::unique_ptr<Sequence>> incoming;
  std::vector<RequestId> cancels;
  EngineStats stats;  // the snapshot stats() returns

  Drafter* drafter(DraftMode mode) {
    if (mode == DraftMode::ngram) return &ngram_drafter;
    return mode == DraftMode::model ? model_drafter.get() : nullptr;
  }
  // Gives back what the sequence holds: its KV slots, and what its drafter keeps for it.
  void release(const Sequence& s) {
    kv.free(s.id);
    if (Drafter* d = drafter(s.draft_mode)) d->release(s.id);
  }
};

}  // namespace difftx::infer
