// One engine step through the model: every layer once over a batch of token rows from many
// sequences, each row at its own position, on the model's backend. The projections and the MLP
// are one product over all rows (the weights read once per step); each row's keys and values go
// to its sequence's KV blocks, then each row attends to its sequence's cached positions
// [0, position] with the single-query kernel (decode_attention.h), whatever the row's role. In
// the layers, rows [0, gemv_rows) take the decode GEMV's reduction order and the others the
// prefill GEMM's (MatmulOrder); the LM head takes the GEMV's for every row. So a row's result
// depends on its sequence alone (infer/engine.h, batch invariance).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "backends/backend.h"
#include "infer/head_logits.h"
#include "infer/kv_pool.h"
#include "model/activations.h"
#include "model/layer.h"
#include "model/model.h"

namespace difftx::infer {

struct BatchRow {
  int32_t token;
  int64_t position;
  int32_t table;  // which block table (run's `tables`) holds the row's sequence
  bool logits;    // whether the next-token logits of this row are wanted
};

// The most rows of one table at consecutive positions, one after another (PagedRows::longest_run).
int64_t longest_run(std::span<const BatchRow> rows);

class BatchForward {
 public:
  // max_rows: the most rows of a step; positions below `context` (the RoPE table's length).
  BatchForward(const model::Model& model, KvPool& pool, int64_t max_rows, int64_t context);

  // Runs the rows (gemv-order rows first) and returns the logits [rows with logits, V] in host
  // memory, in row order; valid until the next call. The blocks for every row's position must be
  // in its table.
  const float* run(std::span<const BatchRow> rows, int64_t gemv_rows,
                   std::span<const std::span<const int32_t>> tables);

 private:
  // The step's integers, as the host lays them out and as the device reads them.
  struct StepIndex {
    std::vector<int64_t> positions;
    std::vector<int32_t> tokens, slots, lengths, tables, blocks, logit_rows;
  };
  void upload_index(int64_t rows);

  const model::Model& model_;
  const model::ModelMatrices& matrices_;  // model_.engine_matrices()
  backends::Backend& backend_;
  KvPool& pool_;
  int64_t max_rows_;
  model::Activations acts_;
  model::LayerConstants constants_;  // the layers' lambdas and head-norm gains, from the fixed weights
  StepIndex index_;
  backends::DeviceBuffer positions_, slots_, lengths_, tables_, blocks_;  // the device's copy of index_
  int64_t block_capacity_ = 0;    // ints blocks_ holds
  infer::HeadLogits logits_;
};

}  // namespace difftx::infer
