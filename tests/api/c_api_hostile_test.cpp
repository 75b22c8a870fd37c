// The C API under hostile arguments: null handles and pointers, negative sizes, ids outside the
// vocabulary, capacities of 0 and too small, options out of range, misuse of engines. Every call
// must return its error value with a message naming what was wrong, never crash (the asan preset
// runs this under AddressSanitizer and UBSan), and leave the handles usable.
#include "difftx/difftx.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "source_dir.h"

namespace difftx {
namespace {

namespace fs = std::filesystem;

const fs::path kMotif = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer";

// The last error holds `part`.
::testing::AssertionResult error_says(const std::string& part) {
  const std::string e = difftx_last_error();
  if (e.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "last error '" << e << "' lacks '" << part << "'";
}

// The last error holds `part` and names no command-line flag: a C caller gave a field.
::testing::AssertionResult error_names_the_field(const std::string& part) {
  if (std::string(difftx_last_error()).find("--") != std::string::npos)
    return ::testing::AssertionFailure() << "last error '" << difftx_last_error() << "' names a flag";
  return error_says(part);
}

class CApiHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    model = difftx_model_load(kMotif.c_str(), nullptr);
    ASSERT_NE(model, nullptr) << difftx_last_error();
    engine = difftx_engine_create(model, nullptr);
    ASSERT_NE(engine, nullptr) << difftx_last_error();
  }
  void TearDown() override {
    difftx_engine_free(engine);
    difftx_model_free(model);
  }
  difftx_model* model = nullptr;
  difftx_engine* engine = nullptr;
};

void ignore(const difftx_token_event*, void*) {}

TEST_F(CApiHostile, NullHandlesAreErrors) {
  int32_t ids[4] = {1, 2, 3, 4};
  char text[16];
  float logits[4];
  EXPECT_EQ(difftx_model_load(nullptr, nullptr), nullptr);
  EXPECT_TRUE(error_says("dir is null"));
  EXPECT_EQ(difftx_vocab_size(nullptr), -1);
  EXPECT_TRUE(error_says("difftx_vocab_size: the model is null"));
  EXPECT_EQ(difftx_context_length(nullptr), -1);
  EXPECT_EQ(difftx_model_metadata(nullptr, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_tokenize(nullptr, "a", 0, ids, 4), INT32_MIN);
  EXPECT_TRUE(error_says("difftx_tokenize: the model is null"));
  EXPECT_EQ(difftx_detokenize(nullptr, ids, 4, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_logits(nullptr, ids, 4, logits), -1);
  const difftx_chat_message message = {"user", "hi"};
  EXPECT_EQ(difftx_chat_template(nullptr, &message, 1, 1, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_engine_create(nullptr, nullptr), nullptr);
  EXPECT_EQ(difftx_engine_submit(nullptr, "a", nullptr, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("difftx_engine_submit: the engine is null"));
  EXPECT_EQ(difftx_engine_submit_ids(nullptr, ids, 4, nullptr, ignore, nullptr), -1);
  EXPECT_EQ(difftx_engine_submit_chat(nullptr, &message, 1, nullptr, ignore, nullptr), -1);
  EXPECT_EQ(difftx_engine_cancel(nullptr, 1), -1);
  EXPECT_EQ(difftx_engine_step(nullptr), -1);
  EXPECT_EQ(difftx_engine_run(nullptr), -1);
  EXPECT_EQ(difftx_engine_start(nullptr), -1);
  difftx_engine_stats stats;
  EXPECT_EQ(difftx_engine_get_stats(nullptr, &stats), -1);
  EXPECT_EQ(difftx_train(nullptr, nullptr, nullptr, nullptr), -1);
  EXPECT_EQ(difftx_analyze(nullptr, "eval", "x", nullptr), nullptr);
  difftx_model_free(nullptr);
  difftx_engine_free(nullptr);
  difftx_string_free(nullptr);
  const difftx_sampling_options o = difftx_sampling_default_options(nullptr);
  EXPECT_EQ(o.max_tokens, 128);
}

TEST_F(CApiHostile, NullPointersBesideAHandleAreErrors) {
  int32_t ids[4] = {1, 2, 3, 4};
  char text[16];
  EXPECT_EQ(difftx_tokenize(model, nullptr, 0, ids, 4), INT32_MIN);
  EXPECT_TRUE(error_says("text is null"));
  EXPECT_EQ(difftx_tokenize(model, "abc", 0, nullptr, 4), INT32_MIN);
  EXPECT_TRUE(error_says("the buffer is null with capacity 4"));
  EXPECT_EQ(difftx_detokenize(model, nullptr, 2, text, 16), INT32_MIN);
  EXPECT_TRUE(error_says("ids: null with count 2"));
  EXPECT_EQ(difftx_detokenize(model, ids, 2, nullptr, 16), INT32_MIN);
  EXPECT_EQ(difftx_logits(model, ids, 4, nullptr), -1);
  EXPECT_TRUE(error_says("out is null"));
  EXPECT_EQ(difftx_logits(model, nullptr, 4, nullptr), -1);
  EXPECT_EQ(difftx_model_metadata(model, nullptr, 16), INT32_MIN);
  const difftx_chat_message bad[] = {{"user", nullptr}};
  EXPECT_EQ(difftx_chat_template(model, bad, 1, 1, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_chat_template(model, nullptr, 1, 1, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_engine_submit(engine, nullptr, nullptr, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("prompt is null"));
  EXPECT_EQ(difftx_engine_submit(engine, "a", nullptr, nullptr, nullptr), -1);
  EXPECT_TRUE(error_says("the callback is null"));
  EXPECT_EQ(difftx_engine_submit_ids(engine, nullptr, 3, nullptr, ignore, nullptr), -1);
  EXPECT_EQ(difftx_engine_submit_chat(engine, bad, 1, nullptr, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("messages[0]: the role or the content is null"));
  EXPECT_EQ(difftx_engine_get_stats(engine, nullptr), -1);
  EXPECT_EQ(difftx_analyze(model, nullptr, "x", nullptr), nullptr);
  EXPECT_EQ(difftx_analyze(model, "eval", nullptr, nullptr), nullptr);
  EXPECT_EQ(difftx_convert(nullptr, "x", nullptr, nullptr, nullptr), -1);
  EXPECT_EQ(difftx_convert(kMotif.c_str(), nullptr, nullptr, nullptr, nullptr), -1);
  difftx_train_options t = difftx_train_default_options();
  EXPECT_EQ(difftx_train(&t, nullptr, nullptr, nullptr), -1);
  EXPECT_TRUE(error_says("data is null"));
}

TEST_F(CApiHostile, NegativeSizesAreErrors) {
  int32_t ids[4] = {1, 2, 3, 4};
  char text[16];
  float logits[1];
  EXPECT_EQ(difftx_tokenize(model, "abc", 0, ids, -1), INT32_MIN);
  EXPECT_TRUE(error_says("capacity -1 is negative"));
  EXPECT_EQ(difftx_tokenize(model, "abc", 0, ids, INT32_MIN), INT32_MIN);
  EXPECT_EQ(difftx_detokenize(model, ids, -5, text, 16), INT32_MIN);
  EXPECT_TRUE(error_says("count -5 is negative"));
  EXPECT_EQ(difftx_detokenize(model, ids, 2, text, -16), INT32_MIN);
  EXPECT_EQ(difftx_logits(model, ids, -1, logits), -1);
  EXPECT_EQ(difftx_logits(model, ids, INT32_MIN, logits), -1);
  EXPECT_EQ(difftx_model_metadata(model, text, -1), INT32_MIN);
  const difftx_chat_message message = {"user", "hi"};
  EXPECT_EQ(difftx_chat_template(model, &message, -1, 1, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_chat_template(model, &message, 0, 1, text, 16), INT32_MIN);
  EXPECT_EQ(difftx_engine_submit_ids(engine, ids, -4, nullptr, ignore, nullptr), -1);
  EXPECT_EQ(difftx_engine_submit_ids(engine, ids, 0, nullptr, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("the prompt has no tokens"));
  EXPECT_EQ(difftx_engine_submit_chat(engine, &message, -2, nullptr, ignore, nullptr), -1);
  EXPECT_EQ(difftx_engine_cancel(engine, -3), -1);
  EXPECT_EQ(difftx_engine_cancel(engine, 0), -1);
  EXPECT_EQ(difftx_engine_cancel(engine, 12345), 0);  // unknown: ignored
  difftx_sampling_options o = difftx_sampling_default_options(model);
  o.max_tokens = -1;
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  EXPECT_TRUE(error_names_the_field("max_tokens -1 must not be negative"));
  o = difftx_sampling_default_options(model);
  o.n_stop = -1;
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  o.top_k = -5;
  o.n_stop = 0;
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  difftx_engine_options e = difftx_engine_default_options();
  e.kv_tokens = -1;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  e = difftx_engine_default_options();
  e.max_queue = -1;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  e = difftx_engine_default_options();
  e.context = -7;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  e = difftx_engine_default_options();
  e.kv_tokens = INT64_MAX;  // the CLI's bound, 2^40: past it the block count would overflow
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  EXPECT_TRUE(error_names_the_field("kv_tokens 9223372036854775807 must be at most 2^40"));
}

TEST_F(CApiHostile, IdsOutsideTheVocabularyAreErrors) {
  const int32_t V = difftx_vocab_size(model);
  std::vector<float> logits(4 * V);
  for (int32_t bad : {-1, V, INT32_MAX, INT32_MIN}) {
    const int32_t ids[4] = {1, bad, 3, 4};
    EXPECT_EQ(difftx_logits(model, ids, 4, logits.data()), -1);
    EXPECT_TRUE(error_says("outside the vocabulary"));
    char text[16];
    EXPECT_EQ(difftx_detokenize(model, ids, 4, text, 16), INT32_MIN);
    EXPECT_TRUE(error_says("at position 1"));
    EXPECT_EQ(difftx_engine_submit_ids(engine, ids, 4, nullptr, ignore, nullptr), -1);
    EXPECT_TRUE(error_says("outside the vocabulary"));
  }
  // Longer than the context: the forward and the engine refuse it.
  std::vector<int32_t> long_ids(difftx_context_length(model) + 1, 1);
  std::vector<float> big(long_ids.size() * V);
  EXPECT_EQ(difftx_logits(model, long_ids.data(), static_cast<int32_t>(long_ids.size()), big.data()), -1);
  EXPECT_TRUE(error_says("exceed max_position_embeddings"));
  EXPECT_EQ(difftx_engine_submit_ids(engine, long_ids.data(), static_cast<int32_t>(long_ids.size()), nullptr, ignore,
                                     nullptr),
            -1);
  EXPECT_TRUE(error_says("longer than the context"));
}

TEST_F(CApiHostile, CapacityZeroAsksForTheSize) {
  const int32_t n = difftx_tokenize(model, "The state of the Union", 0, nullptr, 0);
  ASSERT_LT(n, 0);
  int32_t ids[64];
  EXPECT_EQ(difftx_tokenize(model, "The state of the Union", 0, ids, 0), n);  // a buffer, but no room
  EXPECT_TRUE(error_says("capacity 0 is too small"));
  char text[4];
  EXPECT_LT(difftx_detokenize(model, ids, 0, text, 0), 0);  // even "" needs its NUL
  EXPECT_LT(difftx_model_metadata(model, text, 0), 0);
  EXPECT_LT(difftx_model_metadata(model, text, 4), 0);
}

TEST_F(CApiHostile, BadStringsAndOptionsAreErrors) {
  EXPECT_EQ(difftx_model_load(kMotif.c_str(), "tpu"), nullptr);
  EXPECT_TRUE(error_says("unknown device 'tpu'"));
  EXPECT_EQ(difftx_model_load(kMotif.c_str(), "vulkan:99"), nullptr);  // no such device, never the CPU
  EXPECT_TRUE(error_says("vulkan"));
  EXPECT_EQ(difftx_model_load(kMotif.c_str(), ""), nullptr);
  EXPECT_TRUE(error_says("device: an empty name"));
  EXPECT_EQ(difftx_model_load("/nonexistent/model", nullptr), nullptr);
  EXPECT_TRUE(error_says("/nonexistent/model"));
  int32_t ids[8];
  EXPECT_EQ(difftx_tokenize(model, "bad \xff utf-8", 0, ids, 8), INT32_MIN);

  difftx_engine_options e = difftx_engine_default_options();
  e.kv_dtype = "q3";
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  EXPECT_TRUE(error_says("KV cache storage 'q3'"));
  e.kv_dtype = nullptr;  // the default, bf16
  difftx_engine* with_default = difftx_engine_create(model, &e);
  EXPECT_NE(with_default, nullptr) << difftx_last_error();
  difftx_engine_free(with_default);
  e = difftx_engine_default_options();
  e.max_batch_tokens = 0;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  EXPECT_TRUE(error_names_the_field("max_batch_tokens 0 must be in [1, 1048576]"));
  e = difftx_engine_default_options();
  e.kv_tokens = -1;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  EXPECT_TRUE(error_names_the_field("kv_tokens and kv_bytes must not be negative"));
  e = difftx_engine_default_options();
  e.kv_block_tokens = 7;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  e = difftx_engine_default_options();
  e.context = 1 << 30;
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  EXPECT_TRUE(error_names_the_field("context 1073741824 must be in [1, max_position_embeddings = "));
  e = difftx_engine_default_options();
  e.draft = "/nonexistent/draft";
  EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
  EXPECT_TRUE(error_says("draft /nonexistent/draft: not none, ngram or a model directory"));
  for (const char* none : {static_cast<const char*>(nullptr), "", "none"}) {  // a count without a draft
    e.draft = none;
    e.draft_tokens = 3;
    EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
    EXPECT_TRUE(error_names_the_field("draft_tokens 3 is given without a draft"));
  }
  e.draft = "ngram";
  for (int64_t tokens : {int64_t{0}, int64_t{-1}, int64_t{65}, INT64_MAX}) {
    e.draft_tokens = tokens;
    EXPECT_EQ(difftx_engine_create(model, &e), nullptr);
    EXPECT_TRUE(error_names_the_field("draft_tokens " + std::to_string(tokens) + " must be in [1, 64]"));
  }

  const char* stops[] = {"end", nullptr};
  // Each error names the field as the struct spells it, never `difftx generate`'s flag.
  const std::vector<std::pair<void (*)(difftx_sampling_options&), std::string>> bad = {
      {[](difftx_sampling_options& o) { o.temperature = NAN; }, "temperature nan must be >= 0 (0 is greedy)"},
      {[](difftx_sampling_options& o) { o.temperature = -1; }, "temperature -1 must be >= 0 (0 is greedy)"},
      {[](difftx_sampling_options& o) { o.top_k = -1; }, "top_k -1 must be >= 0"},
      {[](difftx_sampling_options& o) { o.top_p = 2; }, "top_p 2 must be in (0, 1]"},
      {[](difftx_sampling_options& o) { o.min_p = -0.5; }, "min_p -0.5 must be in [0, 1]"},
      {[](difftx_sampling_options& o) { o.presence_penalty = 3; }, "presence_penalty 3 must be in [-2, 2]"},
      {[](difftx_sampling_options& o) { o.repetition_penalty = 0; },
       "repetition_penalty 0 must be in (0, 10] (1 is off)"},
      {[](difftx_sampling_options& o) { o.frequency_penalty = INFINITY; }, "frequency_penalty inf must be in [-2, 2]"},
      {[](difftx_sampling_options& o) { o.max_tokens = -1; }, "max_tokens -1 must not be negative"},
      {[](difftx_sampling_options& o) { o.top_logprobs = 21; }, "top_logprobs 21 must be in [0, 20]"},
      {[](difftx_sampling_options& o) { o.top_logprobs = -1; }, "top_logprobs -1 must be in [0, 20]"},
      {[](difftx_sampling_options& o) { o.n_stop = 17; }, "n_stop 17 must be in [0, 16]"},
      {[](difftx_sampling_options& o) { o.n_stop = 2; }, "stop: null with count 2"},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    difftx_sampling_options o = difftx_sampling_default_options(model);
    bad[i].first(o);
    EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1) << "case " << i;
    EXPECT_TRUE(error_names_the_field(bad[i].second)) << "case " << i;
  }
  difftx_sampling_options o = difftx_sampling_default_options(model);
  o.stop = stops;
  o.n_stop = 2;
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("stop[1] is null"));
  const char* empty[] = {""};
  o.stop = empty;
  o.n_stop = 1;
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("must not be empty"));
  // logit_bias as the server checks it: ids in the vocabulary, each once, biases finite in [-100, 100].
  const std::vector<std::pair<std::vector<difftx_logit_bias>, std::string>> bad_bias = {
      {{{-1, 1.0f}}, "logit_bias: token -1 is outside the vocabulary"},
      {{{INT32_MAX, 1.0f}}, "logit_bias: token 2147483647 is outside the vocabulary"},
      {{{5, 100.5f}}, "logit_bias: the bias of token 5 is 100.5, not in [-100, 100]"},
      {{{5, -101.0f}}, "logit_bias: the bias of token 5 is -101"},
      {{{5, NAN}}, "logit_bias: the bias of token 5 is nan"},
      {{{5, INFINITY}}, "logit_bias: the bias of token 5 is inf"},
      {{{5, 1.0f}, {7, 2.0f}, {5, -1.0f}}, "logit_bias: token 5 is given twice"},
  };
  for (const auto& [bias, says] : bad_bias) {
    o = difftx_sampling_default_options(model);
    o.logit_bias = bias.data();
    o.n_logit_bias = static_cast<int32_t>(bias.size());
    EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1) << says;
    EXPECT_TRUE(error_says(says));
  }
  o = difftx_sampling_default_options(model);
  o.n_logit_bias = 1;  // logit_bias is null
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("logit_bias: null with count 1"));
  const difftx_logit_bias one = {5, 1.0f};
  o.logit_bias = &one;
  o.n_logit_bias = -1;
  EXPECT_EQ(difftx_engine_submit(engine, "a", &o, ignore, nullptr), -1);
  EXPECT_TRUE(error_says("logit_bias: count -1 is negative"));

  EXPECT_EQ(difftx_analyze(model, "haystack", "x", nullptr), nullptr);
  EXPECT_TRUE(error_says("analysis 'haystack' is not one (niah, mqar, attention, outliers, quant, eval)"));
  for (const char* options : {"{", "[1, 2]", R"({"samples": -1})", R"({"samples": "many"})", R"({"contexts": []})",
                              R"({"depths": [0.5, 2]})", R"({"split": "test"})", R"({"value_digits": 99})",
                              R"({"contexts": [1e30]})", R"({"nonsense": 1})"}) {
    EXPECT_EQ(difftx_analyze(model, "niah", "/nonexistent/data", options), nullptr) << options;
    EXPECT_TRUE(error_says("niah options")) << options;
  }
  EXPECT_EQ(difftx_analyze(model, "quant", "/nonexistent/data", R"({"bits": [3, 99]})"), nullptr);
  EXPECT_EQ(difftx_analyze(model, "eval", "/nonexistent/data", nullptr), nullptr);
  EXPECT_TRUE(error_says("/nonexistent/data"));

  EXPECT_EQ(difftx_convert(kMotif.c_str(), "/nonexistent/x/y", "onnx", nullptr, nullptr), -1);
  EXPECT_TRUE(error_names_the_field("to: 'onnx' is not a format"));
  EXPECT_EQ(difftx_convert(kMotif.c_str(), "/nonexistent/x/y", nullptr, "q3", nullptr), -1);
  EXPECT_TRUE(error_names_the_field("dtype: 'q3' is not a storage type"));
  EXPECT_EQ(difftx_convert(kMotif.c_str(), "/nonexistent/x/y", "hf", "q8_0", nullptr), -1);
  EXPECT_TRUE(error_names_the_field("dtype q8_0: a Hugging Face directory holds f32, bf16 or f16 weights; write "
                                    "block types with to difftx or gguf"));

  difftx_train_options t = difftx_train_default_options();
  t.data = "/nonexistent/data";
  t.out = "/nonexistent/run";
  EXPECT_EQ(difftx_train(&t, nullptr, nullptr, nullptr), -1);
  EXPECT_TRUE(error_says("give a config"));
  t.config = "/nonexistent/config.json";
  // Each error names the field as the struct spells it (mix's parser names its CLI flag: left).
  const std::vector<std::pair<void (*)(difftx_train_options&), std::string>> breaks = {
      {[](difftx_train_options& o) { o.steps = 0; }, "steps must be positive"},
      {[](difftx_train_options& o) { o.seq_len = -3; }, "seq_len and micro_batch must be positive"},
      {[](difftx_train_options& o) { o.micro_batch = INT64_MAX; }, "micro_batch 9223372036854775807 x seq_len 256"},
      {[](difftx_train_options& o) { o.lr = NAN; }, "lr must be a positive finite number, got nan"},
      {[](difftx_train_options& o) { o.beta1 = 1; }, "beta1 and beta2 must lie in [0, 1)"},
      {[](difftx_train_options& o) { o.grad_clip = -1; }, "weight_decay and grad_clip must be finite"},
      {[](difftx_train_options& o) { o.warmup = -1; }, "eval_batches, eval_every, checkpoint_every and warmup"},
      {[](difftx_train_options& o) { o.keep_checkpoints = 0; }, "keep_checkpoints must be at least 1"},
      {[](difftx_train_options& o) { o.schedule = "sawtooth"; }, "unknown lr schedule 'sawtooth'"},
      {[](difftx_train_options& o) { o.schedule = nullptr; }, "schedule"},
  };
  for (const auto& [breaking, says] : breaks) {
    difftx_train_options bad_options = t;
    breaking(bad_options);
    EXPECT_EQ(difftx_train(&bad_options, nullptr, nullptr, nullptr), -1);
    EXPECT_TRUE(error_names_the_field(says));
  }
  difftx_train_options bad_mix = t;
  bad_mix.mix = "niah=2";
  EXPECT_EQ(difftx_train(&bad_mix, nullptr, nullptr, nullptr), -1);
  EXPECT_STRNE(difftx_last_error(), "");
  t.out = "";
  EXPECT_EQ(difftx_train(&t, nullptr, nullptr, nullptr), -1);
  EXPECT_TRUE(error_names_the_field("out is empty"));
}

// Analysis options are read as every JSON input is: nesting that would overflow the stack of the
// parser, the destructor or an error message's dump() is refused, and so is a repeated key.
TEST_F(CApiHostile, DeepOrRepeatedAnalysisOptionsAreErrors) {
  const std::string nest = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& options : {R"({"samples": )" + nest + "}", R"({"contexts": [)" + nest + "]}"}) {
    EXPECT_EQ(difftx_analyze(model, "niah", "/nonexistent/data", options.c_str()), nullptr);
    EXPECT_TRUE(error_says("niah options: JSON nested deeper than 256 levels"));
  }
  EXPECT_EQ(difftx_analyze(model, "niah", "/nonexistent/data", R"({"samples": [[1, 2], {"a": 1}]})"), nullptr);
  EXPECT_TRUE(error_says("niah options: 'samples' must be an integer, got an array of 2 elements"));
  EXPECT_EQ(difftx_analyze(model, "niah", "/nonexistent/data", R"({"samples": 1, "samples": 2})"), nullptr);
  EXPECT_TRUE(error_says("niah options names 'samples' twice in one object"));
}

TEST_F(CApiHostile, HandlesStayUsableAfterErrorsAndErrorsAreThePerThreads) {
  int32_t ids[8];
  EXPECT_EQ(difftx_tokenize(model, "abc", 0, ids, -1), INT32_MIN);
  std::string other;
  std::thread([&] { other = difftx_last_error(); }).join();
  EXPECT_EQ(other, "");  // another thread's failure is not this one's
  EXPECT_GT(difftx_tokenize(model, "abc", 0, ids, 8), 0);
  int finished = 0;
  const auto count = [](const difftx_token_event* e, void* user_data) {
    if (e->finish != DIFFTX_FINISH_NONE) ++*static_cast<int*>(user_data);
  };
  difftx_sampling_options o = difftx_sampling_default_options(model);
  o.max_tokens = 3;
  ASSERT_GT(difftx_engine_submit(engine, "abc", &o, count, &finished), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0);
  EXPECT_EQ(finished, 1);
}

TEST_F(CApiHostile, AnOversizedLastErrorIsCutNotOverflowed) {
  const std::string huge(100000, 'x');
  EXPECT_EQ(difftx_model_load(huge.c_str(), nullptr), nullptr);
  EXPECT_LT(std::string(difftx_last_error()).size(), 8192u);
  EXPECT_GT(std::string(difftx_last_error()).size(), 0u);
}

}  // namespace
}  // namespace difftx
