// difftx.attention_map: one attention row, computed as the attention analyses compute theirs
// (eval/attention_maps.h).
#include <pybind11/numpy.h>

#include "bindings.h"
#include "core/error.h"
#include "eval/attention_maps.h"
#include "model/decoder.h"
#include "model/taps.h"

namespace difftx::python {
namespace {

// The head row of query position `query` in `layer`, as the attention analyses compute it.
py::array_t<double> attention_map(const LoadedModel& m, const py::handle& ids_in, int64_t layer, int64_t head,
                                  int64_t query, bool normalised) {
  m.require_cpu("attention_map");
  std::vector<int32_t> ids = sequence_ids(ids_in, m.model.config);
  const model::ModelConfig& c = m.model.config;
  const int64_t T = static_cast<int64_t>(ids.size());
  if (query < 0) query += T;
  DIFFTX_CHECK(query >= 0 && query < T, "query ", query, " outside the ", T, " positions of ids");
  DIFFTX_CHECK(layer >= 0 && layer < c.num_hidden_layers, "layer ", layer, " outside [0, ", c.num_hidden_layers, ")");
  DIFFTX_CHECK(head >= 0 && head < c.num_attention_heads, "head ", head, " outside [0, ", c.num_attention_heads, ")");
  ids.resize(query + 1);  // later tokens cannot change the query's row
  std::vector<double> row;
  {
    GilReleased release;
    ThreadScope scope(m.threads);
    model::Activations acts(c, 1, query + 1);
    model::decoder_forward(m.model, acts, ids.data());
    const model::LayerTap tap = model::layer_tap(c, acts, layer);
    const eval::AttentionRow r = eval::attention_row(tap.dims, tap.q, tap.k, tap.lambda, 0, query);
    row = normalised ? r.normalised(head) : std::vector<double>(r.head_row(head), r.head_row(head) + r.keys());
  }
  return py::array_t<double>(static_cast<py::ssize_t>(row.size()), row.data());
}

}  // namespace

void bind_attention_map(py::module_& m) {
  m.def("attention_map", &attention_map, py::arg("model"), py::arg("ids"), py::arg("layer"), py::arg("head"),
        py::arg("query") = -1, py::kw_only(), py::arg("normalised") = true,
        "The attention row of query position `query` (default: the last) of head `head` in `layer`, over\n"
        "keys 0..query: softmax for baseline, the signed A1 - lambda A2 for DIFF (src/eval/attention_maps.h).\n"
        "normalised divides it by its sum 1 - lambda, keeping signs, as the attention analyses do.");
}

}  // namespace difftx::python
