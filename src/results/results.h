// The results schema: what a run of the paper's analyses found, as plain structs. They are the
// one source of these numbers for the CLI tables, the experiment log and the report; JSON is
// only their serialisation (results.json of `difftx experiment compare`, schema
// "difftx.experiment.compare/1", described in docs/EXPERIMENTS.md; the objects of `difftx
// analyze ... --json`), written by to_json and read by the parse functions below.
//
// Writing: NaN is written as null; an absent optional is not written. Reading: numbers written
// as null read as NaN; optional objects that are absent (or null) are empty optionals; the
// fields that docs/EXPERIMENTS.md does not require (the "extras": counts, seeds, seconds ...)
// may be absent and then read as 0 (numbers: NaN, strings: ""); unknown keys are ignored.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_field.h"

namespace difftx::results {

inline constexpr const char* kResultsSchema = "difftx.experiment.compare/1";

struct Setup {
  std::string preset;
  int64_t tokens_per_model = 0, steps = 0, seed = 0, seq_len = 0, micro_batch = 0, batch_tokens = 0;
  double lr = 0;
  int64_t warmup_steps = 0;
  std::string data, tokenizer, machine;
  std::map<std::string, double> mixture;  // task -> fraction of training rows
  std::vector<int64_t> seeds;             // extra: a multi-seed compare's seeds (empty: `seed` alone)
  std::string init_from;                  // extra: the compare whose runs each run started from (empty: none)
};

struct LossPoint {
  int64_t step = 0;
  int64_t tokens = 0;  // tokens seen at that step
  double loss = 0;     // "loss" in curve, "val_loss" in val_curve
};

struct TrainResults {
  double tokens = 0, seconds = 0, tokens_per_second = 0, final_train_loss = 0;
  double final_val_loss = 0;  // NaN without a validation
  std::vector<LossPoint> curve, val_curve;
};

struct NiahCell {
  int64_t context = 0, needles = 0, queried = 0;
  double depth = 0, accuracy = 0;
  int64_t samples = 0;
  int64_t asked = 0, retrieved = 0;  // queried needles of the cell, and those answered exactly (extras)
};

// Paper Table 2. Cells repeat (context, N, R, depth) at most once per evaluation.
struct NiahResults {
  int64_t samples_per_cell = 0;
  std::vector<NiahCell> cells;
  double mean_accuracy = 0;  // retrieved over asked needles of all cells (pooled); NaN when not written
  // Extras: what the evaluation used.
  std::string accuracy_definition, needle_template, query_template;
  int64_t value_digits = 0;
  uint64_t seed = 0;
  std::string data, split;
  double seconds = 0;
};

// Mean of the cells' accuracies (every cell weighs the same, whatever its number of queried
// needles), over the cells with a finite accuracy; NaN when there are none. The report's
// heatmap titles and results table show this one; the log and the CLI table show the pooled
// NiahResults::mean_accuracy.
double mean_cell_accuracy(const NiahResults& niah);

struct MqarResults {
  double accuracy = 0;
  int64_t samples = 0, pairs = 0, queries = 0;
  // Extras.
  double loss = 0;  // mean over answers, nats
  int64_t answers = 0, sequence_tokens = 0;
  uint64_t seed = 0;
  double seconds = 0;
};

struct Allocation {
  double answer = 0, noise = 0;
  double noise_abs = 0;  // extra
};

struct AllocationPoint {
  double key = 0;  // depth in [0, 1] ("depth") or layer index ("layer", written as an integer)
  Allocation allocation;
};

struct HeadAllocation {
  int64_t layer = 0, head = 0;
  Allocation allocation;
};

// Paper Table 3.
struct AttentionAllocation {
  std::string normalisation;
  std::vector<AllocationPoint> by_depth, by_layer;
  // Extras.
  int64_t prompts = 0, rows = 0, skipped_rows = 0;
  Allocation mean;
  std::vector<HeadAllocation> by_head;
};

struct OutlierStats {
  double top1 = 0, top2 = 0, top3 = 0, median = 0;
  int64_t count = 0;  // extra
};

struct LayerOutliers {
  int64_t layer = 0;
  double attention_logits_top1 = 0, hidden_states_top1 = 0;
};

// Paper Table 5.
struct Outliers {
  int64_t tokens = 0;
  OutlierStats attention_logits, hidden_states;
  // Extras.
  int64_t sequences = 0;
  std::string median_method;  // "median"
  std::vector<LayerOutliers> by_layer;
};

// Paper Figure 8: one bit width.
struct QuantizationPoint {
  int64_t bits = 0;  // 0: not quantized
  double val_loss = 0;
  int64_t val_tokens = 0;                // "tokens", extra: val targets counted
  std::optional<double> niah_accuracy = std::nullopt;  // absent when not measured (null reads as NaN)
  double niah_accuracy_or_nan() const;
};

// Paper Figure 1: one prompt's attention row.
struct AttentionMap {
  int64_t layer = 0, head = 0, query_position = 0;
  std::vector<std::string> tokens;
  std::vector<double> weights;
  int64_t answer_begin = 0, answer_end = 0;
  // Extras.
  int64_t context_begin = 0, context_end = 0;
  double depth = 0;
};

// What the analyses of one model found (each absent when not run).
struct Analyses {
  std::optional<NiahResults> niah = std::nullopt;
  std::optional<MqarResults> mqar = std::nullopt;
  std::optional<AttentionAllocation> attention_allocation = std::nullopt;
  std::optional<AttentionMap> attention_map = std::nullopt;
  std::optional<Outliers> outliers = std::nullopt;
  std::vector<QuantizationPoint> quantization = {};  // empty when absent
};

// One model of a compare: who it is, how it trained, and its analyses.
struct ModelResults : Analyses {
  std::string name, attention;
  int64_t seed = 0;        // extra: the training seed (init and data order)
  int64_t parameters = 0;
  std::string run_dir;     // "" when absent
  nlohmann::json config;   // the model's config.json (null when absent); see set_config
  // A few config keys for the results table (0 when absent).
  int64_t hidden_size = 0, layers = 0, heads = 0;
  TrainResults train;
};

// Sets config and the keys read from it.
void set_config(ModelResults& model, const nlohmann::json& config);

// Written with "statistics" (results/statistics.h) when setup.seeds holds two or more seeds.
struct ExperimentResults {
  std::string schema = kResultsSchema, created;
  Setup setup;
  std::vector<ModelResults> models;
};

// Serialisation: one to_json per object of the schema.
nlohmann::json to_json(const Setup& setup);
nlohmann::json to_json(const TrainResults& train);
nlohmann::json to_json(const NiahResults& niah);
nlohmann::json to_json(const MqarResults& mqar);
nlohmann::json to_json(const AttentionAllocation& allocation);
nlohmann::json to_json(const Outliers& outliers);
nlohmann::json to_json(const std::vector<QuantizationPoint>& quantization);
nlohmann::json to_json(const AttentionMap& map);
nlohmann::json to_json(const Analyses& analyses);  // the present analyses, keyed as in a model
nlohmann::json to_json(const ModelResults& model);
nlohmann::json to_json(const ExperimentResults& results);

// Parsing; errors name the key path, e.g. "results.json: models[2].train: missing key 'curve'".
Setup parse_setup(const io::JsonField& j);
TrainResults parse_train(const io::JsonField& j);
NiahResults parse_niah(const io::JsonField& j);
MqarResults parse_mqar(const io::JsonField& j);
AttentionAllocation parse_allocation(const io::JsonField& j);
Outliers parse_outliers(const io::JsonField& j);
std::vector<QuantizationPoint> parse_quantization(const io::JsonField& j);
AttentionMap parse_attention_map(const io::JsonField& j);
ModelResults parse_model(const io::JsonField& j);
// `source` names the document in errors.
ExperimentResults parse_experiment_results(const nlohmann::json& document, const std::string& source);
ExperimentResults read_experiment_results(const std::filesystem::path& path);

}  // namespace difftx::results
