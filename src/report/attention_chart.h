// The paper's Figure 1 for one prompt: how each model's query row spreads its (normalised)
// attention over the context, with the answer span outlined. A strip over the whole context
// per model, then, when every model saw the same tokens, a zoom on the answer's neighbourhood
// with the tokens written under it.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "report/svg_canvas.h"

namespace difftx::report {

struct AttentionRow {
  std::string label{};                      // model name
  std::string detail{};                     // e.g. "layer 1, head 0, query at 511"
  std::vector<std::string> tokens{};        // context tokens (any bytes: shown safely)
  std::vector<double> weights{};            // one per token; NaN: missing
  size_t answer_begin = 0, answer_end = 0;  // [begin, end) within tokens
};

struct AttentionFigure {
  std::string title{}, subtitle{};
  std::vector<AttentionRow> rows{};
  size_t zoom_context = 12;  // tokens shown on each side of the answer in the zoom
  double width = 980;
};

// Strip cells are merged (each showing the largest weight it covers) when a context has more
// tokens than the strip has pixels.
SvgCanvas attention_figure(const AttentionFigure& figure);

// Share of the finite weights that falls in [begin, end); NaN when there are none.
double answer_share(const AttentionRow& row);

}  // namespace difftx::report
