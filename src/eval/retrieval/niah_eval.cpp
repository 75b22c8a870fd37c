#include "eval/retrieval/niah_eval.h"

#include <cstdio>

#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "eval/retrieval/greedy_match.h"

namespace difftx::retrieval {

NiahResult evaluate_niah(const eval::LogitsForward& forward, const NiahGenerator& generator, const NiahGrid& grid,
                         const std::function<void(const NiahProgress&)>& progress) {
  DIFFTX_CHECK(!grid.contexts.empty() && !grid.needles.empty() && !grid.queried.empty() && !grid.depths.empty(),
               "NIAH: the grid needs at least one context, needle count, queried count and depth");
  DIFFTX_CHECK(grid.samples >= 1, "NIAH: samples per cell ", grid.samples, " must be positive");
  NiahResult result;
  result.grid = grid;
  result.data_dir = generator.haystack().dataset().dir.string();
  result.split = generator.haystack().split();
  std::vector<NiahSpec> specs;
  for (int64_t context : grid.contexts) {
    DIFFTX_CHECK(context <= forward.max_tokens, "NIAH: context ", context,
                 " exceeds the model's max_position_embeddings ", forward.max_tokens);
    for (int64_t n : grid.needles)
      for (int64_t r : grid.queried) {
        if (r > n) continue;
        for (double depth : grid.depths) {
          const NiahSpec spec{context, n, r, depth, grid.value_digits};
          generator.validate(spec);
          specs.push_back(spec);
          result.cells.push_back(NiahCell{context, n, r, depth});
        }
      }
  }
  DIFFTX_CHECK(!specs.empty(), "NIAH: every queried count R exceeds every needle count N (R must be <= N)");

  GreedyMatcher matcher(generator.tokenizer().vocab_size());
  std::vector<float> logits;
  const int64_t total = static_cast<int64_t>(specs.size()) * grid.samples;
  Timer timer;
  for (size_t c = 0; c < specs.size(); ++c) {
    NiahCell& cell = result.cells[c];
    for (int64_t i = 0; i < grid.samples; ++i) {
      const NiahSample s = generator.sample(specs[c], derive_rng(grid.seed, {uint64_t(i)}).next_u64());
      std::vector<int64_t> rows;
      for (const NiahQuery& q : s.queries) {
        const std::vector<int64_t> r = answer_rows(q.answer);
        rows.insert(rows.end(), r.begin(), r.end());
      }
      logits.resize(rows.size() * forward.columns);
      forward.run(s.tokens, rows, logits.data());
      const float* row = logits.data();
      for (const NiahQuery& q : s.queries) {
        ++cell.asked;
        cell.retrieved += matcher.reproduces(row, forward.columns,
                                             std::span(s.tokens).subspan(q.answer.begin, q.answer.size()));
        row += q.answer.size() * forward.columns;
      }
      ++cell.samples;
      if (progress) progress({static_cast<int64_t>(c) * grid.samples + i + 1, total, timer.seconds()});
    }
  }
  result.seconds = timer.seconds();
  return result;
}

results::NiahResults niah_results(const NiahResult& r) {
  results::NiahResults out;
  out.samples_per_cell = r.grid.samples;
  int64_t asked = 0, retrieved = 0;
  for (const NiahCell& c : r.cells) {
    out.cells.push_back({c.context, c.needles, c.queried, c.depth, c.accuracy(), c.samples, c.asked, c.retrieved});
    asked += c.asked;
    retrieved += c.retrieved;
  }
  out.mean_accuracy = asked ? static_cast<double>(retrieved) / asked : 0.0;
  out.accuracy_definition = "queried needles whose value greedy decoding reproduces exactly, over queried needles";
  out.needle_template = std::string(kNeedleLead) + "KEY" + kNeedleMiddle + "VALUE" + kNeedleEnd;
  out.query_template = std::string(kQueryIntro) + "then per queried needle: " + kNeedleLead + "KEY" + kNeedleMiddle +
                       "VALUE" + kNeedleEnd;
  out.value_digits = r.grid.value_digits;
  out.seed = r.grid.seed;
  out.data = r.data_dir;
  out.split = r.split;
  out.seconds = r.seconds;
  return out;
}

std::string niah_table(const NiahResult& r) {
  char buf[64];
  std::string out = "context   N   R |";
  for (double d : r.grid.depths) {
    std::snprintf(buf, sizeof buf, " %5.2f", d);
    out += buf;
  }
  out += " |  mean\n";
  // Cells come grouped by (context, N, R) with one per depth, in grid order.
  const size_t depths = r.grid.depths.size();
  std::vector<int64_t> depth_asked(depths, 0), depth_retrieved(depths, 0);
  for (size_t row = 0; row < r.cells.size(); row += depths) {
    const NiahCell& first = r.cells[row];
    std::snprintf(buf, sizeof buf, "%7lld %3lld %3lld |", (long long)first.context, (long long)first.needles,
                  (long long)first.queried);
    out += buf;
    int64_t asked = 0, retrieved = 0;
    for (size_t d = 0; d < depths; ++d) {
      const NiahCell& c = r.cells[row + d];
      std::snprintf(buf, sizeof buf, " %5.2f", c.accuracy());
      out += buf;
      asked += c.asked;
      retrieved += c.retrieved;
      depth_asked[d] += c.asked;
      depth_retrieved[d] += c.retrieved;
    }
    std::snprintf(buf, sizeof buf, " | %5.2f\n", asked ? static_cast<double>(retrieved) / asked : 0.0);
    out += buf;
  }
  out += "mean            |";
  int64_t asked = 0, retrieved = 0;
  for (size_t d = 0; d < depths; ++d) {
    std::snprintf(buf, sizeof buf, " %5.2f", depth_asked[d] ? static_cast<double>(depth_retrieved[d]) / depth_asked[d] : 0.0);
    out += buf;
    asked += depth_asked[d];
    retrieved += depth_retrieved[d];
  }
  std::snprintf(buf, sizeof buf, " | %5.2f\n", asked ? static_cast<double>(retrieved) / asked : 0.0);
  return out + buf;
}

}  // namespace difftx::retrieval
