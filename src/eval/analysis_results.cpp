#include "eval/analysis_results.h"

#include "data/utf8.h"

namespace difftx::eval {
namespace {

results::Allocation allocation_fields(const Allocation& a) { return {a.answer, a.noise, a.noise_abs}; }

results::OutlierStats outlier_stats(const AbsSummary& s) { return {s.top1, s.top2, s.top3, s.median, s.count}; }

}  // namespace

results::AttentionAllocation allocation_results(const AllocationSummary& s) {
  results::AttentionAllocation a;
  a.normalisation = kAllocationNormalisation;
  a.prompts = s.prompts;
  a.rows = s.rows;
  a.skipped_rows = s.skipped_rows;
  a.mean = allocation_fields(s.mean);
  for (size_t i = 0; i < s.depths.size(); ++i) a.by_depth.push_back({s.depths[i], allocation_fields(s.by_depth[i])});
  for (size_t l = 0; l < s.by_layer.size(); ++l) {
    a.by_layer.push_back({static_cast<double>(l), allocation_fields(s.by_layer[l])});
    for (size_t h = 0; h < s.by_head[l].size(); ++h)
      a.by_head.push_back({static_cast<int64_t>(l), static_cast<int64_t>(h), allocation_fields(s.by_head[l][h])});
  }
  return a;
}

results::AttentionMap attention_map_results(const AllocationPrompt& p, int64_t layer, int64_t head,
                                            const std::vector<double>& weights,
                                            const std::vector<std::string>& tokens) {
  return {.layer = layer,
          .head = head,
          .query_position = p.query_position,
          .tokens = tokens,
          .weights = weights,
          .answer_begin = p.answer.front().begin,
          .answer_end = p.answer.front().end,
          .context_begin = p.context.begin,
          .context_end = p.context.end,
          .depth = p.depth};
}

results::Outliers outlier_results(const OutlierResult& r) {
  results::Outliers o;
  o.tokens = r.tokens;
  o.attention_logits = outlier_stats(r.logits);
  o.hidden_states = outlier_stats(r.hidden);
  o.sequences = r.sequences;
  o.median_method = "exact (two-pass histogram refinement)";
  for (size_t l = 0; l < r.layer_logits_top1.size(); ++l)
    o.by_layer.push_back({static_cast<int64_t>(l), r.layer_logits_top1[l], r.layer_hidden_top1[l]});
  return o;
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

}  // namespace difftx::eval
