// difftx.train (the trainer of `difftx train`, single process, with a per-step callback),
// difftx.prepare and difftx.convert. Ctrl-C raises KeyboardInterrupt in prepare once the corpus
// is read, after every BPE merge and every block of documents; in convert before every tensor.
#include <cmath>

#include <nlohmann/json.hpp>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "api/training.h"
#include "bindings.h"
#include "core/error.h"
#include "data/prepare.h"
#include "data/tasks/mixture_spec.h"
#include "model/model_output.h"
#include "train/trainer.h"

namespace difftx::python {
namespace {

namespace fs = std::filesystem;
using train::decay_shape_from_name;
using train::StepReport;
using train::TrainOptions;
using train::TrainSummary;

py::object number_or_none(double x) { return std::isnan(x) ? py::object(py::none()) : py::float_(x); }

py::dict step_dict(const StepReport& r) {
  py::dict d;
  d["step"] = r.step;
  d["steps"] = r.steps;
  d["loss"] = r.loss;
  d["lr"] = r.lr;
  d["grad_norm"] = r.grad_norm;
  d["tok_s"] = r.tokens_per_second;
  d["val_loss"] = number_or_none(r.val_loss);
  return d;
}

// The run ends at a checkpoint when the callback returns False, raises, or Ctrl-C arrives (the
// exception is raised once that checkpoint is written).
py::dict train(const std::optional<fs::path>& config, const fs::path& data, const fs::path& out,
               const std::optional<fs::path>& init, TrainOptions o, const std::string& schedule,
               const std::optional<std::string>& mix, const py::object& on_step) {
  if (init) o.init_dir = init->string();
  if (config) o.config_path = config->string();
  o.data_dir = data.string();
  o.out_dir = out.string();
  o.schedule = decay_shape_from_name(schedule);
  if (mix) o.mixture = retrieval::parse_mixture(*mix, OptionSpelling::field);
  o.report = [](const std::string& line) {
    GilHeld gil;
    py::print(line, py::arg("flush") = true);
  };
  std::optional<py::error_already_set> raised;
  bool stopped = false;
  o.on_step = [&](const StepReport& r) {
    GilHeld gil;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (r.logged && !on_step.is_none() && on_step(step_dict(r)).ptr() == Py_False) stopped = true;
    } catch (py::error_already_set& e) {
      raised.emplace(std::move(e));
    }
    return !stopped && !raised;
  };
  TrainSummary s;
  {
    GilReleased release;
    s = api::train_in_process(o);
  }
  if (raised) throw *raised;
  py::dict d;
  d["steps_done"] = s.steps_done;
  d["train_loss"] = s.last_train_loss;
  d["val_loss"] = number_or_none(s.last_val_loss);
  d["tokens_per_second"] = s.tokens_per_second;
  d["mfu"] = s.mfu;
  d["stopped"] = stopped;
  return d;
}

// A path or a list of paths, as strings.
std::vector<std::string> path_list(const py::object& paths) {
  if (py::isinstance<py::str>(paths) || py::hasattr(paths, "__fspath__")) return {py::str(paths)};
  std::vector<std::string> out;
  for (const py::handle& p : paths) out.push_back(py::str(p));
  return out;
}

py::object prepare(const py::object& corpus_paths, const fs::path& out, const std::optional<std::string>& tokenizer,
                   int64_t vocab_size, double val_fraction, int64_t max_document_bytes, int64_t shard_tokens,
                   bool quiet) {
  const std::vector<std::string> corpus = path_list(corpus_paths);
  DIFFTX_CHECK(!corpus.empty(), "prepare: give the corpus (files, directories, JSONL)");
  DIFFTX_CHECK(!tokenizer != !vocab_size, "prepare: give either tokenizer (an existing one) or vocab_size (train one)");
  data::PrepareOptions o;
  o.corpus = corpus;
  o.tokenizer = tokenizer.value_or("");
  o.vocab_size = vocab_size;
  o.out = out;
  o.val_fraction = val_fraction;
  o.max_document_bytes = max_document_bytes;
  o.shard_tokens = shard_tokens;
  o.progress = !quiet;
  o.interrupt = check_signals;
  nlohmann::json meta;
  {
    GilReleased release;
    meta = data::prepare_dataset(o);
  }
  return to_python(meta);
}

fs::path convert(const fs::path& model, const fs::path& out, const std::string& to, const std::string& dtype,
                 const std::optional<std::string>& head_dtype) {
  // checked as `difftx convert` checks them
  const model::ModelOutput o = model::model_output(out, to, dtype, head_dtype, OptionSpelling::field);
  GilReleased release;
  model::convert_model(model, o, check_signals);
  return out;
}

}  // namespace

void bind_train(py::module_& m) {
  const TrainOptions d;
  m.def(
      "train",
      [](const std::optional<fs::path>& config, const fs::path& data, const fs::path& out,
         const std::optional<fs::path>& init, int64_t steps, int64_t seq_len, int64_t micro_batch, int64_t batch_tokens,
         double lr, double min_lr_ratio, int64_t warmup, const std::string& schedule, double weight_decay,
         double grad_clip, double beta1, double beta2, uint64_t seed, const std::optional<std::string>& mix,
         int64_t eval_every, int64_t eval_batches, int64_t checkpoint_every, int keep_checkpoints, int64_t log_every,
         bool resume, bool quiet, const py::object& on_step) {
        TrainOptions o;
        o.steps = steps;
        o.seq_len = seq_len;
        o.micro_batch = micro_batch;
        o.batch_tokens = batch_tokens;
        o.lr = lr;
        o.min_lr_ratio = min_lr_ratio;
        o.warmup_steps = warmup;
        o.adamw.weight_decay = weight_decay;
        o.adamw.grad_clip = grad_clip;
        o.adamw.beta1 = beta1;
        o.adamw.beta2 = beta2;
        o.seed = seed;
        o.eval_every = eval_every;
        o.eval_batches = eval_batches;
        o.checkpoint_every = checkpoint_every;
        o.keep_checkpoints = keep_checkpoints;
        o.log_every = log_every;
        o.resume = resume;
        o.quiet = quiet;
        return train(config, data, out, init, o, schedule, mix, on_step);
      },
      py::arg("config"), py::arg("data"), py::arg("out"), py::kw_only(), py::arg("init") = py::none(),
      py::arg("steps") = d.steps, py::arg("seq_len") = d.seq_len, py::arg("micro_batch") = d.micro_batch,
      py::arg("batch_tokens") = d.batch_tokens, py::arg("lr") = d.lr, py::arg("min_lr_ratio") = d.min_lr_ratio,
      py::arg("warmup") = d.warmup_steps, py::arg("schedule") = "cosine", py::arg("weight_decay") = d.adamw.weight_decay,
      py::arg("grad_clip") = d.adamw.grad_clip, py::arg("beta1") = d.adamw.beta1, py::arg("beta2") = d.adamw.beta2,
      py::arg("seed") = d.seed, py::arg("mix") = py::none(), py::arg("eval_every") = d.eval_every,
      py::arg("eval_batches") = d.eval_batches, py::arg("checkpoint_every") = d.checkpoint_every,
      py::arg("keep_checkpoints") = d.keep_checkpoints, py::arg("log_every") = d.log_every, py::arg("resume") = false,
      py::arg("quiet") = false, py::arg("on_step") = py::none(),
      "Trains as `difftx train --config CONFIG --data DATA --out OUT ...` does (one process; the options\n"
      "are the CLI's, with the same defaults; config may be None with init). on_step(dict) is called\n"
      "after every logged step with 'step', 'steps', 'loss', 'lr', 'grad_norm', 'tok_s' and 'val_loss'\n"
      "(None unless validated); returning False ends the run after a checkpoint of that step. An\n"
      "exception in it, or Ctrl-C, also ends it at a checkpoint and is then raised. Returns\n"
      "{'steps_done', 'train_loss', 'val_loss', 'tokens_per_second', 'mfu', 'stopped'}.");
  const data::PrepareOptions p;
  m.def("prepare", &prepare, py::arg("corpus"), py::arg("out"), py::kw_only(), py::arg("tokenizer") = py::none(),
        py::arg("vocab_size") = 0, py::arg("val_fraction") = p.val_fraction,
        py::arg("max_document_bytes") = p.max_document_bytes, py::arg("shard_tokens") = p.shard_tokens,
        py::arg("quiet") = true,
        "Tokenizes a corpus (a list of text files, JSONL files, directories) into train/val shards in\n"
        "out, as `difftx prepare` does: with an existing tokenizer (a name or path) or a BPE vocabulary\n"
        "of vocab_size tokens trained on it. Returns metadata.json's contents. Ctrl-C raises\n"
        "KeyboardInterrupt; once out is written to, it is left without metadata.json (unfinished).");
  m.def("convert", &convert, py::arg("model"), py::arg("out"), py::kw_only(), py::arg("to") = "difftx",
        py::arg("dtype") = "f32", py::arg("head_dtype") = py::none(),
        "Writes the model directory `model` as `difftx convert` does: to 'difftx', 'hf' or 'gguf', with\n"
        "weights in dtype (f32, bf16, f16, q8_0, q4_0, q4_k). Returns out. Ctrl-C raises KeyboardInterrupt\n"
        "and leaves no weights file (nor the out directory, if convert made it).");
}

}  // namespace difftx::python
