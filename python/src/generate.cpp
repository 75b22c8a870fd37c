// Model.generate, Model.stream and Model.generate_many: requests on the continuous-batching
// engine (infer/engine.h), the prompt framed as `difftx generate` frames it, text taken from the
// engine's events. The engine steps on the calling thread with the GIL released; Ctrl-C is
// checked between steps.
#include <deque>
#include <map>

#include <pybind11/stl.h>

#include "api/generation.h"
#include "bindings.h"
#include "core/error.h"
#include "grammar/json_grammar.h"
#include "infer/engine.h"
#include "serve/output_constraint.h"

namespace difftx::python {

using infer::Engine;

namespace {

using api::GenerateArgs;

std::unique_ptr<Engine> make_engine(const LoadedModel& m) {
  (void)m.require_tokenizer();  // the error `difftx generate` gives for a directory without one
  infer::EngineOptions o;
  o.kv = kernels::parse_kv_storage(m.kv_dtype);
  return std::make_unique<Engine>(m.model, m.tokenizer.get(), api::engine_options(m, o));
}

// Runs engine steps until done() (or the engine is idle), checking for Ctrl-C between steps:
// then every request is cancelled and KeyboardInterrupt raised.
template <typename Done>
void run_steps(const LoadedModel& m, Engine& engine, const std::vector<Engine::RequestId>& ids, Done done) {
  GilReleased release;
  ThreadScope scope(m.threads);
  while (!done() && engine.step()) {
    try {
      check_signals();
    } catch (...) {
      for (Engine::RequestId id : ids) engine.cancel(id);
      engine.run_until_idle();
      throw;
    }
  }
}

// One request's text as the engine makes it: Python's iterator over text pieces.
class Stream {
 public:
  Stream(ModelHandle model, const std::string& prompt, const GenerateArgs& args)
      : model_(std::move(model)), engine_(make_engine(*model_)) {
    infer::Request r = api::text_request(*model_, prompt, args);
    r.on_event = [this](const infer::TokenEvent& e) {
      if (!e.text.empty()) pieces_.push_back(e.text);
      if (e.finish != infer::FinishReason::none) finished_ = true, error_ = e.error, reason_ = e.finish;
    };
    id_ = engine_->submit(std::move(r));
  }

  // Called with the GIL held, which serialises the check of busy_: a second thread iterating the
  // stream while the first steps its engine (the GIL released) gets Python's generator error.
  std::optional<std::string> next() {
    if (busy_) throw py::value_error("Stream already executing: another thread is iterating it");
    busy_ = true;
    struct Done {
      bool& busy;
      ~Done() { busy = false; }
    } done{busy_};
    if (pieces_.empty() && !finished_) run_steps(*model_, *engine_, {id_}, [this] { return !pieces_.empty() || finished_; });
    if (!pieces_.empty()) {
      std::string piece = std::move(pieces_.front());
      pieces_.pop_front();
      return piece;
    }
    DIFFTX_CHECK(reason_ != infer::FinishReason::error, error_);
    return std::nullopt;
  }

  const char* finish_reason() const { return finished_ ? infer::finish_reason_name(reason_) : nullptr; }

 private:
  ModelHandle model_;
  std::unique_ptr<Engine> engine_;
  Engine::RequestId id_ = 0;
  std::deque<std::string> pieces_;
  bool finished_ = false;
  infer::FinishReason reason_ = infer::FinishReason::none;
  std::string error_;
  bool busy_ = false;
};

// What the output must be, at most one of: json_schema (a dict, any JSON value or its JSON text),
// grammar (GBNF text), regex (the whole text one match) or choice (one of the texts); the server's
// constraints (serve/output_constraint.h). None of them: no constraint.
struct OutputArgs {
  py::object json_schema;
  std::optional<std::string> grammar, regex;
  std::optional<std::vector<std::string>> choice;
};

std::shared_ptr<const infer::TokenConstraintSource> output_constraint(const LoadedModel& m, const OutputArgs& o) {
  serve::OutputRequest rules;
  if (!o.json_schema.is_none()) {
    const std::string text = py::isinstance<py::str>(o.json_schema)
                                 ? o.json_schema.cast<std::string>()
                                 : py::module_::import("json").attr("dumps")(o.json_schema).cast<std::string>();
    rules.schema = grammar::parse_schema_text(text, "json_schema");
  }
  rules.grammar = o.grammar, rules.regex = o.regex, rules.choice = o.choice;
  const int given = rules.schema.has_value() + rules.grammar.has_value() + rules.regex.has_value() +
                    rules.choice.has_value();
  DIFFTX_CHECK(given <= 1, "json_schema, grammar, regex and choice: give one of them, not ", given);
  DIFFTX_CHECK(!rules.choice || !rules.choice->empty(), "choice: give at least one text");
  if (!rules.constrains_text()) return nullptr;
  const data::Tokenizer& tokenizer = m.require_tokenizer();
  serve::ConstraintModel model;
  model.tokenizer = &tokenizer;
  model.vocabulary = grammar::TokenVocabulary::of(tokenizer, tokenizer.vocab_size());
  rules.format_field = rules.schema ? "json_schema" : rules.grammar ? "grammar" : rules.regex ? "regex" : "choice";
  return serve::ConstraintCache().get(model, rules, false);
}

GenerateArgs generate_args(const LoadedModel& m, std::optional<int64_t> max_new_tokens,
                           std::optional<double> temperature, std::optional<int64_t> top_k,
                           std::optional<double> top_p, std::optional<double> min_p, double presence_penalty,
                           double frequency_penalty, std::optional<double> repetition_penalty, uint64_t seed,
                           const py::object& stop, const OutputArgs& output,
                           const std::map<int32_t, float>& logit_bias, bool skip_special_tokens,
                           std::vector<int32_t> stop_token_ids, bool ignore_eos, bool include_stop_str_in_output,
                           int64_t min_tokens, std::vector<std::string> bad_words) {
  GenerateArgs a;
  a.max_new_tokens = max_new_tokens;
  a.top_k = top_k;
  a.temperature = temperature;
  a.top_p = top_p;
  a.min_p = min_p;
  a.presence_penalty = presence_penalty;
  a.frequency_penalty = frequency_penalty;
  a.repetition_penalty = repetition_penalty;
  a.seed = seed;
  a.constraint = output_constraint(m, output);
  a.logit_bias.assign(logit_bias.begin(), logit_bias.end());
  a.skip_special_tokens = skip_special_tokens;
  a.stop_token_ids = std::move(stop_token_ids);
  a.ignore_eos = ignore_eos;
  a.include_stop_str = include_stop_str_in_output;
  a.min_tokens = min_tokens;
  a.bad_words = std::move(bad_words);
  try {
    if (py::isinstance<py::str>(stop)) a.stop.push_back(stop.cast<std::string>());
    else if (!stop.is_none()) a.stop = stop.cast<std::vector<std::string>>();
  } catch (const py::cast_error&) {
    fail("stop: expected a string or a list of strings, got ", std::string(py::str(py::type::of(stop))));
  }
  return a;
}

std::string generate(const ModelHandle& m, const std::string& prompt, const GenerateArgs& a) {
  Stream stream(m, prompt, a);
  std::string text;
  while (auto piece = stream.next()) text += *piece;
  return text;
}

// Every prompt's request is made (and checked) first; they enter the engine as its queue has room
// (EngineOptions::max_queue), so any number of prompts is taken.
std::vector<std::string> generate_many(const ModelHandle& m, const std::vector<std::string>& prompts,
                                       const GenerateArgs& a) {
  std::unique_ptr<Engine> engine = make_engine(*m);
  std::vector<std::string> texts(prompts.size()), errors(prompts.size());
  std::vector<infer::Request> requests;
  for (size_t i = 0; i < prompts.size(); ++i) {
    infer::Request r = api::text_request(*m, prompts[i], a);
    r.on_event = [&texts, &errors, i](const infer::TokenEvent& e) {
      texts[i] += e.text;
      if (e.finish == infer::FinishReason::error) errors[i] = e.error;
    };
    requests.push_back(std::move(r));
  }
  std::vector<Engine::RequestId> ids;
  const auto submit_while_room = [&] {
    while (ids.size() < requests.size() && engine->stats().waiting < engine->options().max_queue)
      ids.push_back(engine->submit(std::move(requests[ids.size()])));
  };
  submit_while_room();
  run_steps(*m, *engine, ids, [&] {
    submit_while_room();
    return false;
  });
  for (size_t i = 0; i < prompts.size(); ++i) DIFFTX_CHECK(errors[i].empty(), "prompt ", i, ": ", errors[i]);
  return texts;
}

// The keyword arguments every generating method takes: their names and defaults, their parameters
// in the methods' functions, and the GenerateArgs made of them there.
#define DIFFTX_GENERATE_ARGS                                                                                   \
  py::kw_only(), py::arg("max_new_tokens") = py::none(), py::arg("temperature") = py::none(),                \
      py::arg("top_k") = py::none(), py::arg("top_p") = py::none(), py::arg("min_p") = py::none(),           \
      py::arg("presence_penalty") = 0.0, py::arg("frequency_penalty") = 0.0,                                 \
      py::arg("repetition_penalty") = py::none(), py::arg("seed") = 1, py::arg("stop") = py::none(),          \
      py::arg("json_schema") = py::none(), py::arg("grammar") = py::none(), py::arg("regex") = py::none(),   \
      py::arg("choice") = py::none(), py::arg("logit_bias") = std::map<int32_t, float>{},                    \
      py::arg("skip_special_tokens") = true, py::arg("stop_token_ids") = std::vector<int32_t>{},             \
      py::arg("ignore_eos") = false, py::arg("include_stop_str_in_output") = false, py::arg("min_tokens") = 0,  \
      py::arg("bad_words") = std::vector<std::string>{}
#define DIFFTX_GENERATE_PARAMS                                                                                 \
  std::optional<int64_t> max_new_tokens, std::optional<double> temperature, std::optional<int64_t> top_k,    \
      std::optional<double> top_p, std::optional<double> min_p, double presence_penalty,                      \
      double frequency_penalty, std::optional<double> repetition_penalty, uint64_t seed, const py::object& stop, \
      const py::object& json_schema, std::optional<std::string> grammar, std::optional<std::string> regex,   \
      std::optional<std::vector<std::string>> choice, const std::map<int32_t, float>& logit_bias,             \
      bool skip_special_tokens, std::vector<int32_t> stop_token_ids, bool ignore_eos,                         \
      bool include_stop_str_in_output, int64_t min_tokens, std::vector<std::string> bad_words
#define DIFFTX_GENERATE_CALL(l)                                                                               \
  generate_args(*(l), max_new_tokens, temperature, top_k, top_p, min_p, presence_penalty, frequency_penalty, \
                repetition_penalty, seed, stop,                                                              \
                OutputArgs{json_schema, std::move(grammar), std::move(regex), std::move(choice)}, logit_bias,  \
                skip_special_tokens, std::move(stop_token_ids), ignore_eos, include_stop_str_in_output, min_tokens, \
                std::move(bad_words))

constexpr const char* kSamplingDoc =
    "max_new_tokens (default 128), temperature (0: greedy; default 0.8), top_k (0: all), top_p (1: all),\n"
    "min_p (0: all; keeps tokens at least that fraction as likely as the most likely),\n"
    "repetition_penalty (transformers': a token of the prompt or the output has its logit divided by it\n"
    "where positive, multiplied where not; 1: off): None takes the directory's generation_config.json,\n"
    "else difftx generate's default; presence_penalty, frequency_penalty: OpenAI's, in [-2, 2] (0: off);\n"
    "seed: the same seed gives the same\n"
    "text; stop: a string or list of strings that end the text (not included); json_schema: a JSON\n"
    "Schema (dict or JSON text): the text is a JSON document that validates against it, ending where\n"
    "it is complete (a schema that cannot be enforced raises difftx.Error naming the keyword); or,\n"
    "instead, grammar (GBNF text), regex (the whole text is one match) or choice (a list of texts,\n"
    "the text is one of them);\n"
    "logit_bias: {token id: bias in [-100, 100]} added to those tokens' logits (OpenAI's);\n"
    "skip_special_tokens (vLLM's, default True): the special tokens the model writes (<|im_start|>,\n"
    "reserved tokens) are no text, as the server's completions leave them out; False keeps them;\n"
    "vLLM's stop_token_ids (up to 64 ids that end the text, writing none), ignore_eos (the model's\n"
    "end-of-sequence ids and a chat's end of turn do not stop it), include_stop_str_in_output (the\n"
    "text ends after a stop string, not before), min_tokens (no stop before that many tokens) and\n"
    "bad_words (words never written whole: the token that would complete one is not drawn). The\n"
    "prompt is framed as `difftx generate` frames it, so greedy and seeded text equals the CLI's.";

}  // namespace

void bind_generate(py::module_& m, ModelClass& model) {
  py::class_<Stream>(m, "Stream", "Text pieces of one generation as the engine makes them (Model.stream).")
      .def("__iter__", [](Stream& s) -> Stream& { return s; })
      .def("__next__",
           [](Stream& s) {
             auto piece = s.next();
             if (!piece) throw py::stop_iteration();
             return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(piece->data(), piece->size(), "replace"));
           })
      .def_property_readonly("finish_reason", &Stream::finish_reason,
                             "'stop', 'length', 'cancelled' or 'error' once finished, else None.");

  model.def(
      "generate",
      [](const ModelHandle& l, const std::string& prompt, DIFFTX_GENERATE_PARAMS) {
        return generate(l, prompt, DIFFTX_GENERATE_CALL(l));
      },
      py::arg("prompt"), DIFFTX_GENERATE_ARGS,
      (std::string("The continuation of prompt (without the prompt).\n") + kSamplingDoc).c_str());
  model.def(
      "stream",
      [](const ModelHandle& l, const std::string& prompt, DIFFTX_GENERATE_PARAMS) {
        return std::make_unique<Stream>(l, prompt, DIFFTX_GENERATE_CALL(l));
      },
      py::arg("prompt"), DIFFTX_GENERATE_ARGS,
      (std::string("An iterator over the continuation's text pieces as they are made; joined, they are\n"
                   "generate()'s text.\n") +
       kSamplingDoc)
          .c_str());
  model.def(
      "generate_many",
      [](const ModelHandle& l, const std::vector<std::string>& prompts, DIFFTX_GENERATE_PARAMS) {
        return generate_many(l, prompts, DIFFTX_GENERATE_CALL(l));
      },
      py::arg("prompts"), DIFFTX_GENERATE_ARGS,
      (std::string("The continuations of all prompts, run together on one engine; each equals generate()\n"
                   "of that prompt alone (the engine is batch-invariant), except a sampled request with a draft,\n"
                   "whose text (not its distribution) can depend on the others.\n") +
       kSamplingDoc)
          .c_str());
}

}  // namespace difftx::python
