// difftx.load, Model (its config, logits, taps) and Tokenizer.
#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "backends/backend.h"
#include "bindings.h"
#include "core/error.h"
#include "model/decoder.h"
#include "model/taps.h"

namespace difftx::python {

using model::LayerTap;

namespace {

namespace fs = std::filesystem;

constexpr int kMaxThreads = 1024;

model::MatrixPrecision precision_from_name(const std::string& name) {
  if (name == "as_stored") return model::MatrixPrecision::as_stored;
  if (name == "f32") return model::MatrixPrecision::f32;
  fail("weights: '", name, "' is not a precision (as_stored: matrices in the type the files hold; f32: widened)");
}

ModelHandle load(const fs::path& dir, const std::string& weights, const std::string& kv_dtype,
                 std::optional<int> threads, const std::optional<std::string>& device,
                 const std::optional<std::string>& draft, std::optional<int64_t> draft_tokens) {
  // libgomp ends the process when it cannot start that many threads.
  DIFFTX_CHECK(!threads || (*threads > 0 && *threads <= kMaxThreads), "threads: ", *threads, " must be in [1, ",
               kMaxThreads, "] (or None: OMP_NUM_THREADS)");
  DIFFTX_CHECK(!draft || !draft->empty(), "draft: '' is not 'none', 'ngram' or a model directory (None: no draft)");
  api::LoadOptions o;
  if (device) o.device = *device;
  o.precision = precision_from_name(weights);
  o.kv_dtype = kv_dtype;
  o.threads = threads.value_or(0);
  o.draft = draft.value_or("");
  o.draft_tokens = draft_tokens.value_or(0);
  DIFFTX_CHECK(!draft_tokens || *draft_tokens >= 1, "draft_tokens: ", o.draft_tokens, " must be in [1, 64]");
  GilReleased release;
  return api::load_model(dir, o);
}

// `difftx logits` of one sequence: the same forward into a new float32 [T, V] array.
py::array_t<float> sequence_logits(const LoadedModel& m, const std::vector<int32_t>& ids) {
  const int64_t T = static_cast<int64_t>(ids.size()), V = m.model.config.vocab_size;
  py::array_t<float> out({T, V});
  float* data = out.mutable_data();
  GilReleased release;
  api::sequence_logits(m, ids, data);
  return out;
}

// A batch: a list (or tuple) of sequences, or a 2-D array of rows.
bool is_batch(const py::handle& ids) {
  if (py::isinstance<py::array>(ids)) return py::reinterpret_borrow<py::array>(ids).ndim() == 2;
  if (!py::isinstance<py::list>(ids) && !py::isinstance<py::tuple>(ids)) return false;
  const py::sequence s = py::reinterpret_borrow<py::sequence>(ids);
  return s.size() > 0 && (py::isinstance<py::sequence>(s[0]) || py::isinstance<py::array>(s[0]));
}

py::object logits(const LoadedModel& m, const py::handle& ids) {
  if (!is_batch(ids)) return sequence_logits(m, sequence_ids(ids, m.model.config));
  py::list out;
  for (const py::handle& row : ids) {
    out.append(sequence_logits(m, sequence_ids(row, m.model.config)));
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C between rows
  }
  return out;
}

// Layer by layer, stacked: name -> [L, T, width] (lambda: [L] for diff, [L, T, H] for diff2).
py::dict taps(const LoadedModel& m, const py::handle& ids_in) {
  m.require_cpu("taps");
  const std::vector<int32_t> ids = sequence_ids(ids_in, m.model.config);
  const model::ModelConfig& c = m.model.config;
  const int64_t L = c.num_hidden_layers, T = static_cast<int64_t>(ids.size());
  const kernels::AttentionDims dims = c.attention_dims(1, T);
  struct Tap {
    const char* name;
    int64_t width;
    const float* LayerTap::*field;
  };
  std::vector<Tap> wanted = {{"q", dims.q_width(), &LayerTap::q},
                             {"k", dims.k_width(), &LayerTap::k},
                             {"attention_output", dims.out_width(), &LayerTap::attention_output},
                             {"residual", c.hidden_size, &LayerTap::residual_out}};
  const kernels::LambdaSource lambda_source = c.attention_variant().lambda_source();
  if (lambda_source == kernels::LambdaSource::token_logits) wanted.push_back({"lambda", dims.H, &LayerTap::lambda});
  std::vector<py::array_t<float>> arrays;
  for (const Tap& t : wanted) arrays.emplace_back(std::vector<int64_t>{L, T, t.width});
  py::array_t<float> lambdas(L);
  std::vector<float*> outs;
  for (auto& a : arrays) outs.push_back(a.mutable_data());
  float* lambda_out = lambdas.mutable_data();
  {
    GilReleased release;
    ThreadScope scope(m.threads);
    model::Activations acts(c, 1, T);
    model::decoder_forward(m.model, acts, ids.data());
    for (int64_t l = 0; l < L; ++l) {
      const LayerTap tap = model::layer_tap(c, acts, l);
      for (size_t i = 0; i < wanted.size(); ++i)
        std::copy_n(tap.*wanted[i].field, T * wanted[i].width, outs[i] + l * T * wanted[i].width);
      if (lambda_source == kernels::LambdaSource::layer_scalar) lambda_out[l] = *tap.lambda;
    }
  }
  py::dict out;
  for (size_t i = 0; i < wanted.size(); ++i) out[wanted[i].name] = arrays[i];
  if (lambda_source == kernels::LambdaSource::layer_scalar) out["lambda"] = lambdas;
  return out;
}

py::str utf8(const std::string& bytes) {  // bytes that are not UTF-8 (half a character) as U+FFFD
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(bytes.data(), bytes.size(), "replace"));
}

}  // namespace

// One sequence of ids (a list of ints or a 1-D integer array) checked against the model.
std::vector<int32_t> sequence_ids(const py::handle& ids, const model::ModelConfig& c) {
  using IdArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
  const py::array given = py::array::ensure(ids);
  if (!given) PyErr_Clear();  // the message below says what was expected
  // Only integers (and bools) are ids: forcecast alone would truncate floats (1.9 -> 1). An empty
  // list is float64 to numpy: check_sequence names it.
  const bool integers =
      given && (given.size() == 0 || std::string_view("biu").find(given.dtype().kind()) != std::string_view::npos);
  DIFFTX_CHECK(integers && given.ndim() == 1,
               "ids: expected a sequence of token ids (a list of ints or a 1-D integer array)",
               given && !integers ? concat(", got dtype ", std::string(py::str(given.dtype()))) : std::string());
  const IdArray a = IdArray::ensure(given);
  std::vector<int32_t> out(a.size());
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    const int64_t id = a.at(i);
    DIFFTX_CHECK(id >= 0 && id < c.vocab_size, "ids: id ", id, " at position ", i, " is outside the vocabulary [0, ",
                 c.vocab_size, ")");  // before the narrowing to int32
    out[i] = static_cast<int32_t>(id);
  }
  api::check_sequence(out, c);
  return out;
}

ModelClass bind_model(py::module_& m) {
  py::class_<data::Tokenizer, std::shared_ptr<data::Tokenizer>>(m, "Tokenizer",
                                                                  "A model directory's tokenizer.")
      .def(
          "encode",
          [](const data::Tokenizer& t, const std::string& text, bool add_special_tokens) {
            GilReleased release;
            return api::encode_text(t, text, add_special_tokens);
          },
          py::arg("text"), py::arg("add_special_tokens") = false,
          "Token ids of text; add_special_tokens adds the tokenizer's template (Llama 3: BOS).")
      .def(
          "decode",
          [](const data::Tokenizer& t, const std::vector<int32_t>& ids) {
            for (int32_t id : ids)
              DIFFTX_CHECK(id >= 0 && id < t.vocab_size(), "ids: id ", id, " is outside the vocabulary [0, ",
                           t.vocab_size(), ")");
            return utf8(t.decode(ids));
          },
          py::arg("ids"), "The text of ids (bytes that are not valid UTF-8 become U+FFFD).")
      .def_property_readonly("vocab_size", &data::Tokenizer::vocab_size, "Tokens in the vocabulary.")
      .def_property_readonly("name", &data::Tokenizer::name)
      .def("__repr__", [](const data::Tokenizer& t) {
        return "<difftx.Tokenizer " + t.name() + ", " + std::to_string(t.vocab_size()) + " tokens>";
      });

  ModelClass model(m, "Model", "A model directory loaded by difftx.load().");
  model
      .def_property_readonly(
          "config", [](const LoadedModel& l) { return to_python(model::config_to_json(l.model.config)); },
          "The model's config as difftx's config.json holds it (a dict).")
      .def_property_readonly(
          "variant",
          [](const LoadedModel& l) { return std::string(kernels::attention_kind_name(l.model.config.attention)); },
          "'baseline', 'diff' (DIFF V1) or 'diff2' (DIFF V2).")
      .def_property_readonly(
          "num_parameters", [](const LoadedModel& l) { return l.model.config.total_parameters(); })
      .def_property_readonly("path", [](const LoadedModel& l) { return l.dir; }, "The model directory.")
      .def_property_readonly(
          "tokenizer", [](const LoadedModel& l) { return l.tokenizer; },
          "The directory's tokenizer, or None when it holds none.")
      .def("logits", &logits, py::arg("ids"),
           "float32 [T, vocab] logits of a full forward over ids (bit for bit those of `difftx logits`);\n"
           "a list of sequences (or a 2-D array) gives a list of arrays.")
      .def("taps", &taps, py::arg("ids"),
           "Per-layer activations of a forward over ids, stacked over layers: 'q' and 'k' after RoPE\n"
           "[L, T, width], 'attention_output' (before DIFF V1's head norm) [L, T, width], 'residual' (each\n"
           "layer's output) [L, T, hidden_size], and 'lambda' ([L] for diff, per-token logits [L, T, H] for\n"
           "diff2; absent for baseline).")
      .def("__repr__", [](const LoadedModel& l) {
        return "<difftx.Model " + l.dir.string() + ": " + kernels::attention_kind_name(l.model.config.attention) +
               ", " + std::to_string(l.model.config.total_parameters()) + " parameters>";
      });

  m.def("load", &load, py::arg("path"), py::kw_only(), py::arg("weights") = "as_stored", py::arg("kv_dtype") = "bf16",
        py::arg("threads") = py::none(), py::arg("device") = py::none(), py::arg("draft") = py::none(),
        py::arg("draft_tokens") = py::none(),
        "Loads a model directory difftx reads (its own, Hugging Face Llama / DiffLlama, quantized).\n"
        "weights: 'as_stored' keeps matrices in the type the files hold (as generate/logits do) or 'f32'\n"
        "widens them (as the analyses do); kv_dtype: 'bf16', 'f32' or 'int8' for the KV cache of\n"
        "generation; threads: threads of its calls (None: OMP_NUM_THREADS, else every core); device:\n"
        "None or 'cpu', 'vulkan' (the best Vulkan device) or 'vulkan:N' (`difftx --version` lists them);\n"
        "draft: speculative decoding for generate/stream/generate_many, as `difftx generate --draft`:\n"
        "'ngram' (prompt lookup) or the directory of a smaller model with the same vocabulary (None or\n"
        "'none': no draft); draft_tokens: tokens drafted per step, 1 to 64 (None: 6; an error without a\n"
        "draft). The text is the same as without a draft (greedy: bit-identical); only the speed changes.");
  return model;
}

}  // namespace difftx::python
