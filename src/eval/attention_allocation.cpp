#include "eval/attention_allocation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"
#include "eval/attention_maps.h"
#include "model/decoder.h"
#include "model/taps.h"

namespace difftx::eval {

const char* const kAllocationNormalisation =
    "each head's row at the query position divided by its sum: softmax rows as they are (sum 1); "
    "diff rows A1 - lambda*A2 by 1 - lambda; diff2 rows A_2i - sigmoid(lambda_i)*A_2i+1 by 1 - sigmoid(lambda_i); "
    "signs kept, so every row sums to 1; rows with |1 - w| < 0.01 are left out. answer = sum over the answer span, noise = signed sum over the rest of "
    "the context (noise_abs: sum of absolute values); means over prompts, layers and heads";

void check_prompt(const AllocationPrompt& p, int64_t vocab_size, int64_t max_positions, const std::string& what) {
  const int64_t n = static_cast<int64_t>(p.tokens.size());
  DIFFTX_CHECK(n > 0, what, ": the prompt has no tokens");
  DIFFTX_CHECK(n <= max_positions, what, ": ", n, " tokens exceed the model's max_position_embeddings ", max_positions);
  for (int64_t i = 0; i < n; ++i)
    DIFFTX_CHECK(p.tokens[i] >= 0 && p.tokens[i] < vocab_size, what, ": token id ", p.tokens[i], " at position ", i,
                 " is outside the vocabulary [0, ", vocab_size, ")");
  DIFFTX_CHECK(p.query_position >= 0 && p.query_position < n, what, ": query position ", p.query_position,
               " is outside the prompt [0, ", n, ")");
  const TokenSpan c = p.context;
  DIFFTX_CHECK(c.begin >= 0 && c.begin <= c.end && c.end <= p.query_position + 1, what, ": context span [", c.begin,
               ", ", c.end, ") is not inside the keys the query sees, [0, ", p.query_position + 1, ")");
  DIFFTX_CHECK(!p.answer.empty(), what, ": no answer span");
  for (const TokenSpan& a : p.answer)
    DIFFTX_CHECK(a.begin < a.end && a.begin >= c.begin && a.end <= c.end, what, ": answer span [", a.begin, ", ",
                 a.end, ") is empty or not inside the context span [", c.begin, ", ", c.end, ")");
  DIFFTX_CHECK(p.depth >= 0 && p.depth <= 1, what, ": depth ", p.depth, " is not in [0, 1]");
}

Allocation allocate(const double* w, int64_t keys, const AllocationPrompt& p) {
  DIFFTX_CHECK(p.context.begin >= 0 && p.context.end <= keys, "allocate: context span [", p.context.begin, ", ",
               p.context.end, ") reaches past the row's ", keys, " keys");
  std::vector<char> in_answer(keys, 0);
  for (const TokenSpan& a : p.answer) {
    DIFFTX_CHECK(a.begin >= 0 && a.end <= keys, "allocate: answer span [", a.begin, ", ", a.end,
                 ") reaches past the row's ", keys, " keys");
    std::fill(in_answer.begin() + a.begin, in_answer.begin() + a.end, 1);
  }
  Allocation out;
  for (int64_t s = 0; s < keys; ++s) {
    if (in_answer[s]) {
      out.answer += w[s];
    } else if (s >= p.context.begin && s < p.context.end) {
      out.noise += w[s];
      out.noise_abs += std::fabs(w[s]);
    }
  }
  return out;
}

PromptRows prompt_rows(const model::Model& model, const AllocationPrompt& prompt) {
  const model::ModelConfig& c = model.config;
  check_prompt(prompt, c.vocab_size, c.max_position_embeddings, "attention prompt");
  const int64_t T = prompt.query_position + 1;  // later tokens cannot change the query's row
  model::Activations acts(c, 1, T);
  model::decoder_forward(model, acts, prompt.tokens.data());
  PromptRows r;
  r.layers = c.num_hidden_layers;
  r.heads = c.num_attention_heads;
  r.keys = T;
  r.weights.reserve(r.layers * r.heads * T);
  for (int64_t l = 0; l < r.layers; ++l) {
    const model::LayerTap a = model::layer_tap(c, acts, l);
    const AttentionRow row = attention_row(a.dims, a.q, a.k, a.lambda, 0, prompt.query_position);
    for (int64_t h = 0; h < r.heads; ++h) {
      const std::vector<double> w = row.normalised(h);
      r.weights.insert(r.weights.end(), w.begin(), w.end());
    }
  }
  return r;
}

namespace {

struct Mean {
  Allocation sum;
  int64_t n = 0;
  void add(const Allocation& a) {
    if (std::isnan(a.answer)) return;  // a row without a normalised form
    sum.answer += a.answer;
    sum.noise += a.noise;
    sum.noise_abs += a.noise_abs;
    ++n;
  }
  Allocation get() const {  // NaN when every row was left out
    const double k = n > 0 ? 1.0 / n : std::numeric_limits<double>::quiet_NaN();
    return {sum.answer * k, sum.noise * k, sum.noise_abs * k};
  }
};

}  // namespace

AllocationSummary summarise_allocation(const std::vector<AllocationPrompt>& prompts, const std::vector<PromptRows>& rows) {
  DIFFTX_CHECK(prompts.size() == rows.size(), "summarise_allocation: ", prompts.size(), " prompts but ", rows.size(),
               " measurements");
  DIFFTX_CHECK(!prompts.empty(), "summarise_allocation: no prompts");
  const int64_t L = rows[0].layers, H = rows[0].heads;
  AllocationSummary s;
  Mean all;
  std::map<double, Mean> depth;
  std::vector<Mean> layer(L);
  std::vector<std::vector<Mean>> head(L, std::vector<Mean>(H));
  for (size_t p = 0; p < prompts.size(); ++p) {
    DIFFTX_CHECK(rows[p].layers == L && rows[p].heads == H, "summarise_allocation: prompt ", p,
                 " was measured on another model shape");
    // Each prompt contributes one mean over its layers and heads, so every prompt weighs the same.
    Mean prompt_mean;
    for (int64_t l = 0; l < L; ++l) {
      Mean layer_mean;
      for (int64_t h = 0; h < H; ++h) {
        const Allocation a = allocate(rows[p].row(l, h), rows[p].keys, prompts[p]);
        ++s.rows;
        s.skipped_rows += std::isnan(a.answer);
        prompt_mean.add(a);
        layer_mean.add(a);
        head[l][h].add(a);
      }
      layer[l].add(layer_mean.get());
    }
    all.add(prompt_mean.get());
    depth[prompts[p].depth].add(prompt_mean.get());
  }
  s.prompts = static_cast<int64_t>(prompts.size());
  s.mean = all.get();
  for (const auto& [d, m] : depth) {
    s.depths.push_back(d);
    s.by_depth.push_back(m.get());
  }
  for (int64_t l = 0; l < L; ++l) {
    s.by_layer.push_back(layer[l].get());
    s.by_head.emplace_back();
    for (int64_t h = 0; h < H; ++h) s.by_head[l].push_back(head[l][h].get());
  }
  return s;
}

std::vector<double> figure_row(const PromptRows& rows, int64_t layer, int64_t head) {
  DIFFTX_CHECK(layer >= -1 && layer < rows.layers, "attention map: layer ", layer, " outside [0, ", rows.layers,
               ") (or -1 for the mean over layers)");
  DIFFTX_CHECK(head >= -1 && head < rows.heads, "attention map: head ", head, " outside [0, ", rows.heads,
               ") (or -1 for the mean over heads)");
  std::vector<double> out(rows.keys, 0.0);
  int64_t n = 0;
  for (int64_t l = 0; l < rows.layers; ++l)
    for (int64_t h = 0; h < rows.heads; ++h) {
      if ((layer >= 0 && l != layer) || (head >= 0 && h != head)) continue;
      const double* w = rows.row(l, h);
      if (std::isnan(w[0])) continue;  // a row without a normalised form
      for (int64_t s = 0; s < rows.keys; ++s) out[s] += w[s];
      ++n;
    }
  for (double& x : out) x = n > 0 ? x / n : std::numeric_limits<double>::quiet_NaN();
  return out;
}

AttentionAnalysis analyse_attention(const model::Model& model, const std::vector<AllocationPrompt>& prompts,
                                    int64_t map_layer, int64_t map_head, const Interrupt& interrupt) {
  DIFFTX_CHECK(!prompts.empty(), "attention analysis: no prompts");
  std::vector<PromptRows> rows;
  for (const AllocationPrompt& p : prompts) {
    rows.push_back(prompt_rows(model, p));
    if (interrupt) interrupt();
  }
  AttentionAnalysis a;
  a.summary = summarise_allocation(prompts, rows);
  for (size_t i = 0; i < prompts.size(); ++i)
    if (std::fabs(prompts[i].depth - 0.5) < std::fabs(prompts[a.figure_prompt].depth - 0.5)) a.figure_prompt = i;
  a.figure_weights = figure_row(rows[a.figure_prompt], map_layer, map_head);
  return a;
}

}  // namespace difftx::eval
