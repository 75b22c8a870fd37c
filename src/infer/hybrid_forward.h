// One engine step through a hybrid stack (config.h HybridConfig; docs/MODEL.md "SambaY"): the
// layers of model/hybrid_layer.h over a step's rows from many sequences, prompt rows and decode
// rows together, as batch_forward.h runs docs/SPEC.md's decoder.
//
// - Mamba layers: each sequence's conv window and SSM state are in its state slot (state_pool.h,
//   the KvCacheManager's recurrent table [0]): read at the step's start, advanced over the
//   sequence's rows in position order and left there at its end. A sequence's first step starts
//   from zeros (a preempted one is recomputed from its tokens). Rows of sequences with one row in
//   the step take the step kernels, the others the prompt kernels over their runs of rows; both
//   give the same bits, so a row's result does not depend on how its sequence was cut.
// - Drafted rows (speculative decoding): a sequence verifying L drafted tokens holds 1 + L state
//   slots (kv_cache_manager.h); its rows advance a chain of them one row at a time, so that slot
//   [1 + j] keeps the state after its first 1 + j rows and [0] the state after all of them, and
//   the commit keeps the one after the accepted rows.
// - Sliding-window and full attention layers: each row's keys and values into its sequence's
//   blocks of the layer's page group, then the single-query kernel over them (a sliding layer
//   over its last sliding_window positions, never reading the blocks given back).
// - Cross layers: queries of their own over the full layer's pages; no keys or values stored.
// - GMU layers: the memory the memory layer left for the same row in this step.
// - YOCO: the cross decoder (the GMU and cross layers above the full layer) stores nothing a later
//   row reads, so it runs over the rows that want logits only (a prompt chunk's last row, decode
//   rows), moved to the front; a step with none ends below it. A prompt's prefill runs half the
//   stack.
// Reduction orders as batch_forward.h's: rows of generated tokens (first) the GEMV's, the others
// the GEMM's, the LM head the GEMV's for every row that wants logits.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "infer/head_logits.h"
#include "infer/kv_cache_manager.h"
#include "infer/kv_pool.h"
#include "infer/state_pool.h"
#include "model/hybrid_activations.h"
#include "model/model.h"

namespace difftx::infer {

struct StepPlan;

class HybridForward {
 public:
  // groups: the KvCacheManager's (kv_cache_groups); max_rows: the most rows of a step; positions
  // below `context`. An error on a backend without the hybrid ops.
  HybridForward(const model::Model& model, KvPool& pool, StatePool& states, const std::vector<KvCacheGroup>& groups,
                int64_t max_rows, int64_t context);

  // Runs the plan's rows; returns the logits [rows with logits, V] in host memory, in row order,
  // valid until the next call. Every row's blocks and every sequence's state slot are in the
  // plan's tables.
  const float* run(const StepPlan& plan);

  // Where each layer's cache is: its group, and its index among the group's layers (the block's
  // layer, kv_pool.h; the state pool's Mamba layer).
  struct LayerPlace {
    int32_t group = -1;
    int64_t index = 0;
  };

 private:
  // One page group's rows as paged attention reads them: each row's slot, where its table starts
  // in `blocks`, the tables one after another; and the device's copy.
  struct PageIndex {
    std::vector<int32_t> slots, tables, blocks;
    backends::DeviceBuffer device_slots, device_tables, device_blocks;
    int64_t block_capacity = 0;
  };
  // A run of rows of one sequence at consecutive positions and the state slot they advance
  // (prompt kernels); or, with slot -1, a run of rows of one-row sequences, each advancing its
  // row_slots_ entry (step kernels). A run with drafted rows (chain >= 0) advances its rows one
  // at a time through chain_slots_[chain, chain + count - 1) and then `slot`.
  struct RowRun {
    int64_t first_row, count;
    int32_t slot;
    int64_t chain = -1;
  };
  class Core;

  void index_step(const StepPlan& plan);
  // Moves the rows that want logits to the front (the residual stream, the GMU memory, their
  // lengths and the cross layers' tables) and makes them the step's rows; returns how many of
  // them are rows of generated tokens (the GEMV order).
  int64_t keep_logit_rows(int64_t gemv_rows);

  const model::Model& model_;
  model::HybridActivations acts_;
  const model::ModelMatrices& matrices_;  // model_.engine_matrices()
  backends::Backend& backend_;
  KvPool& pool_;
  StatePool& states_;
  std::vector<KvCacheGroup> groups_;
  std::vector<LayerPlace> places_;  // per layer
  int32_t recurrent_ = -1;           // the recurrent group
  int64_t cross_from_ = 0;           // the cross decoder's first layer (every layer from it GMU or cross)
  int32_t cross_pages_ = -1;         // the page group its cross layers read
  int64_t max_rows_, context_;
  // The step's index.
  int64_t rows_ = 0, max_length_ = 0, longest_run_ = 1;
  std::vector<int32_t> lengths_, row_slots_, logit_rows_;
  std::vector<RowRun> runs_;  // every row once; a sequence's runs in position order
  std::vector<int32_t> chain_slots_;  // the lookahead state slots of the runs with drafted rows
  std::vector<PageIndex> pages_;  // per group (page groups only)
  backends::DeviceBuffer device_lengths_, device_row_slots_;
  HeadLogits logits_;
};

}  // namespace difftx::infer
