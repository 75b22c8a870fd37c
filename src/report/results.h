// results.json of `difftx experiment compare` (schema "difftx.experiment.compare/1", described
// in docs/EXPERIMENTS.md), read into plain structs. Numbers written as null read as NaN;
// optional objects that are absent (or null) are empty optionals; unknown keys are ignored.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::report {

inline constexpr const char* kResultsSchema = "difftx.experiment.compare/1";

struct Setup {
  std::string preset;
  int64_t tokens_per_model = 0, seed = 0, seq_len = 0, micro_batch = 0;
  double lr = 0;
  std::string data, tokenizer, machine;
  std::map<std::string, double> mixture;  // task -> fraction of training rows
};

struct LossPoint {
  int64_t step = 0;
  double tokens = 0;
  double loss = 0;
};

struct TrainResults {
  double tokens = 0, seconds = 0, tokens_per_second = 0, final_train_loss = 0, final_val_loss = 0;
  std::vector<LossPoint> curve, val_curve;
};

struct NiahCell {
  int64_t context = 0, needles = 0, queried = 0;
  double depth = 0, accuracy = 0;
  int64_t samples = 0;
};

struct NiahResults {
  int64_t samples_per_cell = 0;
  std::vector<NiahCell> cells;
};

struct MqarResults {
  double accuracy = 0;
  int64_t samples = 0, pairs = 0, queries = 0;
};

struct AllocationPoint {
  double key = 0;  // depth in [0, 1] or layer index
  double answer = 0, noise = 0;
};

struct AttentionAllocation {
  std::string normalisation;
  std::vector<AllocationPoint> by_depth, by_layer;
};

struct OutlierStats {
  double top1 = 0, top2 = 0, top3 = 0, median = 0;
};

struct Outliers {
  int64_t tokens = 0;
  OutlierStats attention_logits, hidden_states;
};

struct QuantizationPoint {
  int64_t bits = 0;  // 0: not quantized
  double val_loss = 0;
  double niah_accuracy = 0;  // NaN when not measured
};

struct AttentionMap {
  int64_t layer = 0, head = 0, query_position = 0;
  std::vector<std::string> tokens;
  std::vector<double> weights;
  int64_t answer_begin = 0, answer_end = 0;
};

struct ModelResults {
  std::string name, attention;
  int64_t parameters = 0;
  std::string run_dir;  // "" when absent
  // A few config.json keys for the results table (0 when absent).
  int64_t hidden_size = 0, layers = 0, heads = 0;
  TrainResults train;
  std::optional<NiahResults> niah;
  std::optional<MqarResults> mqar;
  std::optional<AttentionAllocation> attention_allocation;
  std::optional<Outliers> outliers;
  std::vector<QuantizationPoint> quantization;  // empty when absent
  std::optional<AttentionMap> attention_map;
};

struct ExperimentResults {
  std::string schema, created;
  Setup setup;
  std::vector<ModelResults> models;
};

// `source` names the document in errors, e.g. "results.json: models[2].train: missing key 'curve'".
ExperimentResults parse_experiment_results(const nlohmann::json& document, const std::string& source);
ExperimentResults read_experiment_results(const std::filesystem::path& path);

// Mean NIAH accuracy over the cells with a finite accuracy; NaN when there are none.
double mean_niah_accuracy(const NiahResults& niah);

}  // namespace difftx::report
