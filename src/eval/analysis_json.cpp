#include "eval/analysis_json.h"

#include "data/utf8.h"

namespace difftx {
namespace {

using nlohmann::json;

json allocation_fields(const Allocation& a) {
  return {{"answer", a.answer}, {"noise", a.noise}, {"noise_abs", a.noise_abs}};
}

json abs_summary_json(const AbsSummary& s) {
  return {{"top1", s.top1}, {"top2", s.top2}, {"top3", s.top3}, {"median", s.median}, {"count", s.count}};
}

}  // namespace

json allocation_json(const AllocationSummary& s) {
  json j = {{"normalisation", kAllocationNormalisation},
            {"prompts", s.prompts},
            {"rows", s.rows},
            {"skipped_rows", s.skipped_rows},
            {"mean", allocation_fields(s.mean)}};
  j["by_depth"] = json::array();
  for (size_t i = 0; i < s.depths.size(); ++i) {
    json row = allocation_fields(s.by_depth[i]);
    row["depth"] = s.depths[i];
    j["by_depth"].push_back(row);
  }
  j["by_layer"] = json::array();
  j["by_head"] = json::array();
  for (size_t l = 0; l < s.by_layer.size(); ++l) {
    json row = allocation_fields(s.by_layer[l]);
    row["layer"] = l;
    j["by_layer"].push_back(row);
    for (size_t h = 0; h < s.by_head[l].size(); ++h) {
      json cell = allocation_fields(s.by_head[l][h]);
      cell["layer"] = l;
      cell["head"] = h;
      j["by_head"].push_back(cell);
    }
  }
  return j;
}

json attention_map_json(const AllocationPrompt& p, int64_t layer, int64_t head, const std::vector<double>& weights,
                        const std::vector<std::string>& tokens) {
  json answer = json::array({p.answer.front().begin, p.answer.front().end});
  return {{"layer", layer},     {"head", head},       {"query_position", p.query_position},
          {"tokens", tokens},   {"weights", weights}, {"answer_span", answer},
          {"context_span", json::array({p.context.begin, p.context.end})}, {"depth", p.depth}};
}

json outliers_json(const OutlierResult& r) {
  json j = {{"tokens", r.tokens},
            {"sequences", r.sequences},
            {"attention_logits", abs_summary_json(r.logits)},
            {"hidden_states", abs_summary_json(r.hidden)},
            {"median", "exact (two-pass histogram refinement)"}};
  j["by_layer"] = json::array();
  for (size_t l = 0; l < r.layer_logits_top1.size(); ++l)
    j["by_layer"].push_back(
        {{"layer", l}, {"attention_logits_top1", r.layer_logits_top1[l]}, {"hidden_states_top1", r.layer_hidden_top1[l]}});
  return j;
}

json quantization_json(const std::vector<QuantizationPoint>& points) {
  json j = json::array();
  for (const QuantizationPoint& p : points)
    j.push_back({{"bits", p.bits}, {"val_loss", p.result.loss}, {"tokens", p.result.tokens}});
  return j;
}

std::vector<std::string> token_strings(const data::Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string bytes = tokenizer.decode({&id, 1});
    std::string text;
    std::string_view rest = bytes;
    while (!rest.empty()) {
      const size_t valid = data::valid_utf8_prefix(rest);
      text.append(rest.substr(0, valid));
      if (valid == rest.size()) break;
      text.append("\xEF\xBF\xBD");  // U+FFFD for one stray byte
      rest.remove_prefix(valid + 1);
    }
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace difftx
