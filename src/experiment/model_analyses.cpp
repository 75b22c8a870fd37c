#include "experiment/model_analyses.h"

#include <cstdio>

#include "core/timer.h"
#include "data/loader.h"
#include "data/split_reader.h"
#include "data/tasks/mqar.h"
#include "eval/analysis_results.h"
#include "eval/attention_allocation.h"
#include "eval/logits_forward.h"
#include "eval/quantization.h"

namespace difftx::experiment {
namespace {

using namespace difftx::eval;  // the analyses this file runs

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, pattern, a, b, c);
  return buf;
}

}  // namespace

results::Analyses analyse_model(const model::Model& model, const data::Tokenizer& tokenizer,
                                const std::filesystem::path& data_dir, const AnalysisOptions& o,
                                const std::function<void(const std::string&)>& log) {
  results::Analyses out;
  const data::SplitReader haystack(data_dir, "val");
  const retrieval::NiahGenerator generator(tokenizer, haystack);

  Timer timer;
  const retrieval::NiahResult niah = retrieval::evaluate_niah(model_forward(model), generator, o.niah);
  out.niah = retrieval::niah_results(niah);
  log(format("NIAH: mean accuracy %.3f over %.0f cells (%.0f s)", out.niah->mean_accuracy,
             static_cast<double>(niah.cells.size()), timer.seconds()));

  timer.reset();
  const retrieval::MqarResult mqar =
      retrieval::evaluate_mqar(model_forward(model), retrieval::mqar_vocabulary(tokenizer), tokenizer.vocab_size(), o.mqar);
  out.mqar = retrieval::mqar_results(mqar);
  log(format("MQAR: accuracy %.3f, answer loss %.3f nats (%.0f s)", mqar.accuracy(), mqar.loss, timer.seconds()));

  timer.reset();
  const std::vector<AllocationPrompt> prompts = retrieval::niah_allocation_prompts(generator, o.prompts);
  const AttentionAnalysis attention = analyse_attention(model, prompts, -1, -1);
  out.attention_allocation = allocation_results(attention.summary);
  const AllocationPrompt& shown = prompts[attention.figure_prompt];
  const std::vector<int32_t> seen(shown.tokens.begin(), shown.tokens.begin() + shown.query_position + 1);
  out.attention_map = attention_map_results(shown, -1, -1, attention.figure_weights, token_strings(tokenizer, seen));
  log(format("attention allocation: answer %.3f, noise %.3f (%.0f s)", attention.summary.mean.answer,
             attention.summary.mean.noise, timer.seconds()));

  timer.reset();
  data::TokenLoader val = data::sequential_loader(data_dir, "val", o.val_micro_batch, o.val_seq_len);
  const OutlierResult outliers = measure_outliers(model, val, o.outliers);
  out.outliers = outlier_results(outliers);
  log(format("outliers: top-1 |attention logit| %.1f, top-1 |hidden state| %.1f (%.0f s)", outliers.logits.top1,
             outliers.hidden.top1, timer.seconds()));

  // Figure 8: val loss and retrieval accuracy of the same model with its attention logits
  // absmax fake-quantized to each width (the val windows are those of the outlier sample).
  timer.reset();
  PerplexityOptions batches;
  batches.max_batches = o.quant_val_batches;
  out.quantization = quantization_sweep(model, val, o.bits, batches);
  for (results::QuantizationPoint& point : out.quantization) {
    const int bits = static_cast<int>(point.bits);
    const retrieval::NiahResult q = retrieval::evaluate_niah(model_forward(model, {bits}), generator, o.quant_niah);
    point.niah_accuracy = retrieval::niah_results(q).mean_accuracy;
  }
  log(format("quantization: %.0f bit widths, val loss and NIAH accuracy each (%.0f s)", static_cast<double>(o.bits.size()),
             timer.seconds()));
  return out;
}

}  // namespace difftx::experiment
