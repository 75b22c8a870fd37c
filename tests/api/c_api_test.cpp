// The C API (include/difftx/difftx.h) against the library it wraps: logits bit for bit those of
// the decoder or of a hybrid stack's forward (and within the oracles' tolerances), tokens those of
// the tokenizer, the engine's greedy streams those of generate(), training stopped by its
// callback, conversion and the analyses. Hostile arguments are in c_api_hostile_test.cpp.
#include "difftx/difftx.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "source_dir.h"

#include "api/generation.h"
#include "api/loaded_model.h"
#include "chat/chat_template.h"
#include "infer/generate.h"
#include "infer/utf8_stream.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "model/hybrid_decoder.h"
#include "model/model_io.h"
#include "support/word_dataset.h"

namespace difftx {
namespace {

namespace fs = std::filesystem;

const fs::path kOracle = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/oracle";
const fs::path kMotif = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer";
const fs::path kPhi4Flash = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/phi4flash";

// A model handle freed at the end of the scope.
struct ModelPtr {
  explicit ModelPtr(const fs::path& dir) : m(difftx_model_load(dir.c_str(), "cpu")) {}
  ~ModelPtr() { difftx_model_free(m); }
  difftx_model* m;
};

TEST(CApi, VersionIsTheHeaders) {
  EXPECT_EQ(std::string(difftx_version()), std::to_string(DIFFTX_VERSION_MAJOR) + "." +
                                               std::to_string(DIFFTX_VERSION_MINOR) + "." +
                                               std::to_string(DIFFTX_VERSION_PATCH));
}

TEST(CApi, LogitsAreTheDecodersBitForBitAndTheOraclesWithinItsTolerance) {
  for (const auto& entry : fs::directory_iterator(kOracle)) {
    const fs::path dir = entry.path();
    SCOPED_TRACE(dir.filename().string());
    ModelPtr model(dir);
    ASSERT_NE(model.m, nullptr) << difftx_last_error();
    io::SafetensorsReader expected(dir / "expected.safetensors");
    const std::vector<int32_t> inputs = expected.read_i32("inputs");
    const std::vector<float> want = expected.read_f32("logits");
    const int64_t B = expected.info("inputs").shape[0], T = expected.info("inputs").shape[1];
    const int32_t V = difftx_vocab_size(model.m);
    ASSERT_EQ(V * B * T, static_cast<int64_t>(want.size()));
    const model::Model reference = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
    for (int64_t b = 0; b < B; ++b) {
      std::vector<float> got(T * V), same(T * V);
      ASSERT_EQ(difftx_logits(model.m, inputs.data() + b * T, static_cast<int32_t>(T), got.data()), 0)
          << difftx_last_error();
      model::Activations acts(reference.config, 1, T);
      model::decoder_logits(reference, acts, inputs.data() + b * T, same.data());
      EXPECT_EQ(got, same);  // bit for bit `difftx logits`
      double scale = 0, err = 0;
      for (int64_t i = 0; i < T * V; ++i) {
        scale = std::max(scale, std::fabs(static_cast<double>(want[b * T * V + i])));
        err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[b * T * V + i]));
      }
      EXPECT_LE(err, 2e-5 + 2e-5 * scale);  // tests/model/oracle_test.cpp's tolerance
    }
  }
}

// A hybrid stack (Phi-4-mini-flash's fixtures): its own forward, as `difftx logits` runs it.
TEST(CApi, HybridLogitsAreTheHybridForwardsBitForBitAndTheOraclesWithinItsTolerance) {
  int dirs = 0;
  for (const auto& entry : fs::directory_iterator(kPhi4Flash)) {
    const fs::path dir = entry.path();
    SCOPED_TRACE(dir.filename().string());
    ++dirs;
    ModelPtr model(dir);
    ASSERT_NE(model.m, nullptr) << difftx_last_error();
    const io::NpyArray<int64_t> tokens = io::read_npy_i64(dir / "tokens.npy");
    const io::NpyArray<float> want = io::read_npy_f32(dir / "logits.npy");
    const int64_t T = tokens.shape[1], V = difftx_vocab_size(model.m);
    ASSERT_EQ(V, want.shape[2]);
    const std::vector<int32_t> ids(tokens.data.begin(), tokens.data.begin() + T);  // the first sequence
    std::vector<float> got(T * V), same(T * V);
    ASSERT_EQ(difftx_logits(model.m, ids.data(), static_cast<int32_t>(T), got.data()), 0) << difftx_last_error();
    const model::Model reference = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
    model::HybridActivations acts(reference.config, 1, T, *reference.backend);
    model::hybrid_logits(reference, acts, ids.data(), same.data());
    EXPECT_EQ(got, same);
    double err = 0;
    for (int64_t i = 0; i < T * V; ++i) err = std::max(err, std::fabs(static_cast<double>(got[i]) - want.data[i]));
    EXPECT_LE(err, 2e-3);  // tests/model/phi4flash_test.cpp's bound against the float64 oracle
  }
  EXPECT_EQ(dirs, 5);
}

TEST(CApi, ThreadsMayCallOneModelAtOnce) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  const int32_t V = difftx_vocab_size(model.m);
  const std::vector<int32_t> ids = {276, 5, 17, 99, 3, 250, 41};
  std::vector<float> alone(ids.size() * V);
  ASSERT_EQ(difftx_logits(model.m, ids.data(), static_cast<int32_t>(ids.size()), alone.data()), 0);
  std::vector<std::vector<float>> got(4, std::vector<float>(ids.size() * V));
  std::vector<std::thread> threads;
  for (auto& out : got)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) difftx_logits(model.m, ids.data(), static_cast<int32_t>(ids.size()), out.data());
    });
  for (auto& t : threads) t.join();
  for (const auto& out : got) EXPECT_EQ(out, alone);
}

// A model's text calls fail, saying it has no tokenizer.
void expect_no_tokenizer(const difftx_model* m) {
  int32_t ids[8];
  EXPECT_EQ(difftx_tokenize(m, "hello", 0, ids, 8), INT32_MIN);
  EXPECT_NE(std::string(difftx_last_error()).find("no tokenizer"), std::string::npos) << difftx_last_error();
  char text[8];
  const int32_t one = 1;
  EXPECT_EQ(difftx_detokenize(m, &one, 1, text, 8), INT32_MIN);
}

TEST(CApi, AModelWithoutATokenizerLoadsAndOnlyItsTextCallsFail) {
  ModelPtr model(kOracle / "baseline");
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  EXPECT_EQ(difftx_vocab_size(model.m), 61);
  EXPECT_EQ(difftx_context_length(model.m), 64);
  expect_no_tokenizer(model.m);
  const int32_t one = 1;
  std::vector<float> logits(61);
  EXPECT_EQ(difftx_logits(model.m, &one, 1, logits.data()), 0) << difftx_last_error();
}

// A tokenizer written into the directory after the model loaded is not the model's: its text
// calls still fail (they once read a null tokenizer and crashed).
TEST(CApi, ATokenizerThatAppearsAfterLoadingIsNotTheModels) {
  const fs::path dir = fs::temp_directory_path() / ("difftx_c_api_late_tokenizer_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kMotif, dir);
  fs::rename(dir / "tokenizer.json", dir / "later.json");
  {
    ModelPtr model(dir);
    ASSERT_NE(model.m, nullptr) << difftx_last_error();
    fs::rename(dir / "later.json", dir / "tokenizer.json");
    expect_no_tokenizer(model.m);
  }
  fs::remove_all(dir);
}

TEST(CApi, TokenizeFollowsTheBufferRuleAndGivesTheTokenizersIds) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  const std::string text = "The capital of France <|im_end|> is";
  const auto want = api::encode_text(api::load_model(kMotif)->require_tokenizer(), text, false);
  ASSERT_GT(want.size(), 3u);
  const int32_t n = static_cast<int32_t>(want.size());
  EXPECT_EQ(difftx_tokenize(model.m, text.c_str(), 0, nullptr, 0), -n);  // the size query
  std::vector<int32_t> ids(want.size());
  EXPECT_EQ(difftx_tokenize(model.m, text.c_str(), 0, ids.data(), n - 1), -n);
  EXPECT_EQ(difftx_tokenize(model.m, text.c_str(), 0, ids.data(), n), n) << difftx_last_error();
  EXPECT_EQ(ids, want);
  EXPECT_EQ(difftx_tokenize(model.m, "", 0, nullptr, 0), 0);

  char buf[256];
  EXPECT_EQ(difftx_detokenize(model.m, ids.data(), n, nullptr, 0), -static_cast<int32_t>(text.size() + 1));
  EXPECT_EQ(difftx_detokenize(model.m, ids.data(), n, buf, static_cast<int32_t>(text.size())),
            -static_cast<int32_t>(text.size() + 1));
  EXPECT_EQ(difftx_detokenize(model.m, ids.data(), n, buf, sizeof buf), static_cast<int32_t>(text.size()));
  EXPECT_EQ(std::string(buf), text);
  EXPECT_EQ(difftx_detokenize(model.m, nullptr, 0, buf, sizeof buf), 0);
  EXPECT_EQ(std::string(buf), "");
}

TEST(CApi, MetadataIsTheModelsJson) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  const int32_t needed = -difftx_model_metadata(model.m, nullptr, 0);
  ASSERT_GT(needed, 1);
  std::string json(needed, '\0');
  ASSERT_EQ(difftx_model_metadata(model.m, json.data(), needed), needed - 1) << difftx_last_error();
  const nlohmann::json j = nlohmann::json::parse(json.c_str());
  EXPECT_EQ(j["variant"], "diff");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["config"]["vocab_size"], 288);
  EXPECT_EQ(j["tokenizer"]["vocab_size"], api::load_model(kMotif)->tokenizer->vocab_size());
  EXPECT_EQ(j["eos_ids"], nlohmann::json({276, 278}));
  EXPECT_EQ(j["chat_template"], false);
  EXPECT_GT(j["num_parameters"].get<int64_t>(), 0);
}

// Without eos ids in config.json (nor a generation_config.json), generation ends at the
// tokenizer's end-of-text, and the metadata says so.
TEST(CApi, MetadataNamesTheEndOfTextWhereTheConfigNamesNoEos) {
  const fs::path dir = fs::temp_directory_path() / ("difftx_c_api_no_eos_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kMotif, dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  config.erase("eos_token_id");
  std::ofstream(dir / "config.json") << config.dump();
  {
    ModelPtr model(dir);
    ASSERT_NE(model.m, nullptr) << difftx_last_error();
    std::string json(1 << 16, '\0');
    ASSERT_GT(difftx_model_metadata(model.m, json.data(), static_cast<int32_t>(json.size())), 0) << difftx_last_error();
    const nlohmann::json j = nlohmann::json::parse(json.c_str());
    EXPECT_EQ(j["eos_ids"], nlohmann::json({api::load_model(dir)->tokenizer->end_of_text()}));
  }
  fs::remove_all(dir);
}

// A model directory whose name is not UTF-8 loads, and its metadata names it with U+FFFD.
TEST(CApi, MetadataOfADirectoryWhoseNameIsNotUtf8) {
  const fs::path dir = fs::temp_directory_path() / ("difftx_c_api_\xff_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kMotif, dir);
  {
    ModelPtr model(dir);
    ASSERT_NE(model.m, nullptr) << difftx_last_error();
    std::string json(1 << 16, '\0');
    ASSERT_GT(difftx_model_metadata(model.m, json.data(), static_cast<int32_t>(json.size())), 0) << difftx_last_error();
    EXPECT_NE(std::string(json.c_str()).find("\xef\xbf\xbd"), std::string::npos);
  }
  fs::remove_all(dir);
}

// The sampling defaults are generation_config.json's where it gives them (its min_p and
// repetition_penalty too, as vLLM takes them), else `difftx generate`'s.
TEST(CApi, SamplingDefaultsAreTheGenerationConfigs) {
  const difftx_sampling_options plain = difftx_sampling_default_options(nullptr);
  EXPECT_EQ(plain.min_p, 0.0);
  EXPECT_EQ(plain.repetition_penalty, 1.0);
  EXPECT_EQ(plain.presence_penalty, 0.0);
  const fs::path dir = fs::temp_directory_path() / ("difftx_c_api_generation_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kMotif, dir);
  std::ofstream(dir / "generation_config.json") << R"({"temperature": 0.6, "min_p": 0.05, "repetition_penalty": 1.1})";
  {
    ModelPtr model(dir);
    ASSERT_NE(model.m, nullptr) << difftx_last_error();
    const difftx_sampling_options o = difftx_sampling_default_options(model.m);
    EXPECT_EQ(o.temperature, 0.6);
    EXPECT_EQ(o.min_p, 0.05);
    EXPECT_EQ(o.repetition_penalty, 1.1);
  }
  fs::remove_all(dir);
}

// A copy of the Motif fixture with a ChatML template in tokenizer_config.json.
struct ChatModel {
  ChatModel() {
    dir = fs::temp_directory_path() / ("difftx_c_api_chat_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::copy(kMotif, dir);
    std::ofstream(dir / "tokenizer_config.json")
        << nlohmann::json{{"eos_token", "<|im_end|>"},
                          {"chat_template",
                           "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                           "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"}};
  }
  ~ChatModel() { fs::remove_all(dir); }
  fs::path dir;
};

TEST(CApi, ChatTemplateRendersAsTheLibraryDoes) {
  ChatModel chat;
  ModelPtr model(chat.dir);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  const difftx_chat_message messages[] = {{"system", "Be brief."}, {"user", "Hi"}};
  char text[512];
  const int32_t n = difftx_chat_template(model.m, messages, 2, 1, text, sizeof text);
  ASSERT_GT(n, 0) << difftx_last_error();
  const auto tmpl = chat::ChatTemplate::from_model_dir(chat.dir.string());
  const std::string want = tmpl->render(
      nlohmann::json::array({{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}),
      true);
  EXPECT_EQ(std::string(text, n), want);
  EXPECT_EQ(difftx_chat_template(model.m, messages, 2, 1, text, n), -(n + 1));
  ModelPtr plain(kMotif);
  EXPECT_EQ(difftx_chat_template(plain.m, messages, 2, 1, text, sizeof text), INT32_MIN);
  EXPECT_NE(std::string(difftx_last_error()).find("has no chat template"), std::string::npos) << difftx_last_error();
}

// What a request's events carried.
struct Collected {
  std::vector<int32_t> tokens;
  std::string text;
  int32_t finish = DIFFTX_FINISH_NONE;
  int64_t request = 0, generated = 0, prompt = 0;
  int events_after_finish = 0;
  std::vector<float> logprobs;  // the tokens'
  std::vector<std::vector<int32_t>> top;
};

void collect(const difftx_token_event* e, void* user_data) {
  Collected& c = *static_cast<Collected*>(user_data);
  if (c.finish != DIFFTX_FINISH_NONE) ++c.events_after_finish;
  c.request = e->request;
  if (e->token >= 0) {
    c.tokens.push_back(e->token);
    c.logprobs.push_back(e->logprob);
    c.top.emplace_back(e->top_ids, e->top_ids + e->n_top);
  }
  c.text.append(e->text, e->text_len);
  c.finish = e->finish;
  c.generated = e->generated_tokens;
  c.prompt = e->prompt_tokens;
}

// The tokens generate() (one sequence, the CLI's path) makes for the prompt framed as the C API
// frames it, greedy.
std::vector<int32_t> generate_tokens(const fs::path& dir, const std::string& prompt, int64_t max_new_tokens) {
  const auto m = api::load_model(dir);
  const infer::Request r = api::text_request(*m, prompt, api::GenerateArgs{});
  infer::GenerateOptions o;
  o.sampling.temperature = 0;
  o.max_new_tokens = max_new_tokens;
  o.sample_vocab = m->tokenizer->vocab_size();
  o.stop_tokens = r.options.stop_tokens;
  std::vector<int32_t> out;
  infer::generate(m->model, r.prompt, o, [&](const infer::TokenEvent& e) {
    if (e.id >= 0) out.push_back(e.id);
  });
  return out;
}

// Speculative decoding (difftx_engine_options::draft): prompt lookup, and the model drafting for
// itself (every draft accepted), give generate()'s greedy tokens; the stats count the drafts.
TEST(CApi, DraftedStreamsAreWhatGenerateMakes) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  const std::vector<int32_t> want = generate_tokens(kMotif, "The state of the Union", 16);
  for (const std::string& draft : {std::string("ngram"), kMotif.string()}) {
    SCOPED_TRACE(draft);
    difftx_engine_options e = difftx_engine_default_options();
    EXPECT_EQ(e.draft, nullptr);
    EXPECT_EQ(e.draft_tokens, 6);
    e.draft = draft.c_str();
    e.draft_tokens = 3;
    difftx_engine* engine = difftx_engine_create(model.m, &e);
    ASSERT_NE(engine, nullptr) << difftx_last_error();
    difftx_sampling_options o = difftx_sampling_default_options(model.m);
    o.temperature = 0;
    o.max_tokens = 16;
    Collected got;
    ASSERT_GT(difftx_engine_submit(engine, "The state of the Union", &o, collect, &got), 0) << difftx_last_error();
    ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
    EXPECT_EQ(got.tokens, want);
    difftx_engine_stats stats;
    ASSERT_EQ(difftx_engine_get_stats(engine, &stats), 0);
    if (draft != "ngram") {
      EXPECT_GT(stats.draft_tokens, 0);
      EXPECT_EQ(stats.draft_accepted, stats.draft_tokens);
      EXPECT_LT(stats.steps, static_cast<int64_t>(want.size()));
    }
    difftx_engine_free(engine);
  }
}

TEST(CApi, GreedyStreamsAreWhatGenerateMakesAlsoSideBySide) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  ASSERT_NE(engine, nullptr) << difftx_last_error();
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  o.temperature = 0;
  o.max_tokens = 12;
  const std::vector<std::string> prompts = {"The state", "of the Union", "is strong and"};
  std::vector<Collected> got(prompts.size());
  std::vector<int64_t> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ids.push_back(difftx_engine_submit(engine, prompts[i].c_str(), &o, collect, &got[i]));
    ASSERT_GT(ids.back(), 0) << difftx_last_error();
  }
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  difftx_engine_stats stats;
  ASSERT_EQ(difftx_engine_get_stats(engine, &stats), 0);
  EXPECT_EQ(stats.waiting + stats.running, 0);
  EXPECT_EQ(stats.finished[DIFFTX_FINISH_STOP] + stats.finished[DIFFTX_FINISH_LENGTH], 3);
  const auto library = api::load_model(kMotif);
  for (size_t i = 0; i < prompts.size(); ++i) {
    SCOPED_TRACE(prompts[i]);
    EXPECT_EQ(got[i].request, ids[i]);
    EXPECT_EQ(got[i].tokens, generate_tokens(kMotif, prompts[i], 12));
    EXPECT_TRUE(got[i].finish == DIFFTX_FINISH_STOP || got[i].finish == DIFFTX_FINISH_LENGTH) << got[i].finish;
    EXPECT_EQ(got[i].events_after_finish, 0);
    // A stop token that ended it counts (usage, as OpenAI's), though it is not streamed.
    EXPECT_EQ(got[i].generated, static_cast<int64_t>(got[i].tokens.size()) + (got[i].finish == DIFFTX_FINISH_STOP));
    // The events' text is the tokens' as `difftx generate` prints them (bytes held back until a
    // character completes, those that never do as U+FFFD; special tokens left out); a stop token
    // is neither token nor text.
    infer::Utf8Stream printed;
    std::string want;
    const std::vector<int32_t> skipped = api::skipped_special_tokens(*library->tokenizer, nullptr);
    for (int32_t id : got[i].tokens)
      if (std::find(skipped.begin(), skipped.end(), id) == skipped.end())
        want += printed.push(library->tokenizer->decode({&id, 1}));
    EXPECT_EQ(got[i].text, want + printed.finish());
  }
  difftx_engine_free(engine);
}

TEST(CApi, IdsAndChatPromptsRunToo) {
  ChatModel chat;
  ModelPtr model(chat.dir);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  o.temperature = 0;
  o.max_tokens = 5;
  o.logprobs = 1;
  o.top_logprobs = 3;
  Collected by_ids, by_chat;
  const int32_t prompt[] = {276, 10, 20, 30};
  EXPECT_GT(difftx_engine_submit_ids(engine, prompt, 4, &o, collect, &by_ids), 0) << difftx_last_error();
  const difftx_chat_message messages[] = {{"user", "Hi"}};
  EXPECT_GT(difftx_engine_submit_chat(engine, messages, 1, &o, collect, &by_chat), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  for (const Collected* c : {&by_ids, &by_chat}) {
    EXPECT_TRUE(c->finish == DIFFTX_FINISH_STOP || c->finish == DIFFTX_FINISH_LENGTH) << c->finish;
    ASSERT_FALSE(c->tokens.empty());
    for (size_t t = 0; t < c->tokens.size(); ++t) {
      EXPECT_LE(c->logprobs[t], 0.0f);
      ASSERT_EQ(c->top[t].size(), 3u);
      EXPECT_EQ(c->top[t][0], c->tokens[t]);  // greedy: the most likely
    }
  }
  EXPECT_EQ(by_ids.prompt, 4);  // the ids as given, no frame
  const auto library = api::load_model(chat.dir);
  const infer::Request want =
      api::chat_request(*library, nlohmann::json::array({{{"role", "user"}, {"content", "Hi"}}}), {});
  EXPECT_EQ(by_chat.prompt, static_cast<int64_t>(want.prompt.size()));
  difftx_engine_free(engine);
}

// logit_bias: +100 on a token makes it every greedy token, -100 on the unbiased greedy first
// token makes the first another; the defaults carry none.
TEST(CApi, LogitBiasSteersTheTokens) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  ASSERT_NE(engine, nullptr) << difftx_last_error();
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  EXPECT_EQ(o.logit_bias, nullptr);
  EXPECT_EQ(o.n_logit_bias, 0);
  o.temperature = 0;
  o.max_tokens = 4;
  const int32_t prompt[] = {10, 20, 30};
  Collected plain, forced, banned;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &plain), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  ASSERT_FALSE(plain.tokens.empty());
  const difftx_logit_bias force[] = {{65, 100.0f}, {plain.tokens[0], -3.5f}};
  o.logit_bias = force;
  o.n_logit_bias = 2;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &forced), 0) << difftx_last_error();
  const difftx_logit_bias ban = {plain.tokens[0], -100.0f};
  o.logit_bias = &ban;
  o.n_logit_bias = 1;
  o.max_tokens = 1;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &banned), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  EXPECT_EQ(forced.tokens, std::vector<int32_t>(4, 65));
  ASSERT_EQ(banned.tokens.size(), 1u);
  EXPECT_NE(banned.tokens[0], plain.tokens[0]);
  difftx_engine_free(engine);
}

// vLLM's stop options: stop_token_ids end the stream (the id drawn, not streamed), min_tokens
// masks them first (the tokens are the greedy ones with the id banned), ignore_eos lets a forced
// end-of-sequence id go on, a bad word is never drawn; out of range, an error naming the field.
TEST(CApi, StopTokenIdsMinTokensAndIgnoreEos) {
  ModelPtr model(kMotif);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  ASSERT_NE(engine, nullptr) << difftx_last_error();
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  EXPECT_EQ(o.n_stop_token_ids, 0);
  EXPECT_EQ(o.ignore_eos, 0);
  EXPECT_EQ(o.min_tokens, 0);
  o.temperature = 0;
  o.max_tokens = 6;
  const int32_t prompt[] = {10, 20, 30};
  const difftx_logit_bias force = {65, 100.0f}, ban = {65, -100.0f};
  const int32_t stop_ids[] = {65};
  Collected stopped, late, banned;
  o.logit_bias = &force;
  o.n_logit_bias = 1;
  o.stop_token_ids = stop_ids;
  o.n_stop_token_ids = 1;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &stopped), 0) << difftx_last_error();
  o.min_tokens = 2;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &late), 0) << difftx_last_error();
  o.min_tokens = 0;
  o.n_stop_token_ids = 0;
  o.logit_bias = &ban;
  o.max_tokens = 2;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &banned), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  EXPECT_TRUE(stopped.tokens.empty());
  EXPECT_EQ(stopped.finish, DIFFTX_FINISH_STOP);
  EXPECT_EQ(stopped.generated, 1);
  EXPECT_EQ(late.tokens, banned.tokens);
  EXPECT_EQ(late.generated, 3);

  // The model's end of sequence, forced: it ends the stream, unless ignore_eos.
  const std::vector<int32_t> eos = api::load_model(kMotif)->defaults.eos_ids;
  ASSERT_FALSE(eos.empty());
  const difftx_logit_bias to_eos = {eos[0], 100.0f};
  o.logit_bias = &to_eos;
  o.max_tokens = 3;
  Collected ended, ignored;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &ended), 0) << difftx_last_error();
  o.ignore_eos = 1;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &ignored), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  EXPECT_TRUE(ended.tokens.empty());
  EXPECT_EQ(ignored.tokens, std::vector<int32_t>(3, eos[0]));
  EXPECT_EQ(ignored.finish, DIFFTX_FINISH_LENGTH);

  // bad_words: the forced 'A' (id 65, one token) is never drawn.
  const difftx_logit_bias to_a = {65, 100.0f};
  const char* bad[] = {"A"};
  o.logit_bias = &to_a;
  o.ignore_eos = 0;
  o.bad_words = bad;
  o.n_bad_words = 1;
  Collected without_a;
  ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &without_a), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
  EXPECT_EQ(without_a.tokens.size(), 3u);
  EXPECT_EQ(std::count(without_a.tokens.begin(), without_a.tokens.end(), 65), 0);
  const char* empty[] = {"   "};
  o.bad_words = empty;
  EXPECT_EQ(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &ended), -1);
  EXPECT_NE(std::string(difftx_last_error()).find("is no token"), std::string::npos) << difftx_last_error();
  o.n_bad_words = 0;

  o.n_stop_token_ids = 65;
  EXPECT_EQ(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &ended), -1);
  EXPECT_NE(std::string(difftx_last_error()).find("n_stop_token_ids 65 must be in [0, 64]"), std::string::npos)
      << difftx_last_error();
  o.n_stop_token_ids = 0;
  o.min_tokens = 4;
  EXPECT_EQ(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &ended), -1);
  EXPECT_NE(std::string(difftx_last_error()).find("min_tokens 4 must be in [0, max_new_tokens 3]"), std::string::npos)
      << difftx_last_error();
  difftx_engine_free(engine);
}

// skip_special_tokens (default 1, as the server's): a special token the model writes (<|im_start|>,
// drawn through logit_bias) is no text from any of the three submits unless the request keeps
// them; it is a token either way.
TEST(CApi, SpecialTokensAreNoTextUnlessKept) {
  ChatModel chat;
  ModelPtr model(chat.dir);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  ASSERT_NE(engine, nullptr) << difftx_last_error();
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  EXPECT_EQ(o.skip_special_tokens, 1);
  const difftx_logit_bias force = {277, 100.0f};
  o.logit_bias = &force;
  o.n_logit_bias = 1;
  o.temperature = 0;
  o.max_tokens = 3;
  const int32_t prompt[] = {10, 20, 30};
  const difftx_chat_message messages[] = {{"user", "Hi"}};
  for (const int32_t skip : {1, 0}) {
    SCOPED_TRACE(skip);
    o.skip_special_tokens = skip;
    Collected by_text, by_ids, by_chat;
    ASSERT_GT(difftx_engine_submit(engine, "Hi", &o, collect, &by_text), 0) << difftx_last_error();
    ASSERT_GT(difftx_engine_submit_ids(engine, prompt, 3, &o, collect, &by_ids), 0) << difftx_last_error();
    ASSERT_GT(difftx_engine_submit_chat(engine, messages, 1, &o, collect, &by_chat), 0) << difftx_last_error();
    ASSERT_EQ(difftx_engine_run(engine), 0) << difftx_last_error();
    for (const Collected* c : {&by_text, &by_ids, &by_chat}) {
      EXPECT_EQ(c->tokens, std::vector<int32_t>(3, 277));
      EXPECT_EQ(c->text, skip ? "" : "<|im_start|><|im_start|><|im_start|>");
    }
  }
  difftx_engine_free(engine);
}

TEST(CApi, FreeingAnEngineEndsItsRequestsAsCancelled) {
  ModelPtr model(kMotif);
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  ASSERT_NE(engine, nullptr) << difftx_last_error();
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  o.max_tokens = 40;
  Collected a, b;
  ASSERT_GT(difftx_engine_submit(engine, "one", &o, collect, &a), 0);
  ASSERT_GT(difftx_engine_submit(engine, "two", &o, collect, &b), 0);
  ASSERT_EQ(difftx_engine_step(engine), 1);
  difftx_model_free(model.m);  // the engine keeps what it needs
  model.m = nullptr;
  difftx_engine_free(engine);
  EXPECT_EQ(a.finish, DIFFTX_FINISH_CANCELLED);
  EXPECT_EQ(b.finish, DIFFTX_FINISH_CANCELLED);
}

// Waits for a number of finished requests on a background engine.
struct Finished {
  std::mutex mutex;
  std::condition_variable done;
  int count = 0;
  std::string text;
};

void count_finished(const difftx_token_event* e, void* user_data) {
  Finished& f = *static_cast<Finished*>(user_data);
  std::lock_guard lock(f.mutex);
  f.text.append(e->text, e->text_len);
  if (e->finish != DIFFTX_FINISH_NONE) {
    ++f.count;
    f.done.notify_all();
  }
}

TEST(CApi, AnEngineOnItsOwnThreadRunsRequestsAndCannotBeSteppedToo) {
  ModelPtr model(kMotif);
  difftx_engine* engine = difftx_engine_create(model.m, nullptr);
  ASSERT_EQ(difftx_engine_start(engine), 0) << difftx_last_error();
  EXPECT_EQ(difftx_engine_step(engine), -1);
  EXPECT_NE(std::string(difftx_last_error()).find("runs its own thread"), std::string::npos) << difftx_last_error();
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  o.temperature = 0;
  o.max_tokens = 6;
  Finished f;
  ASSERT_GT(difftx_engine_submit(engine, "The Congress", &o, count_finished, &f), 0) << difftx_last_error();
  {
    std::unique_lock lock(f.mutex);
    ASSERT_TRUE(f.done.wait_for(lock, std::chrono::seconds(60), [&] { return f.count == 1; }));
  }
  difftx_engine_free(engine);
}

// A callback that tries what it must not (step, free) and what it may (cancel, stats).
struct Misuse {
  difftx_engine* engine = nullptr;
  int32_t step = 0, cancel = -1, stats = -1;
  std::string step_error;
  bool freed_while_inside = false;
};

void misuse(const difftx_token_event* e, void* user_data) {
  Misuse& m = *static_cast<Misuse*>(user_data);
  if (e->finish != DIFFTX_FINISH_NONE || m.cancel == 0) return;
  m.step = difftx_engine_step(m.engine);
  m.step_error = difftx_last_error();
  difftx_engine_free(m.engine);  // refused: the engine stays usable
  difftx_engine_stats s;
  m.stats = difftx_engine_get_stats(m.engine, &s);
  m.cancel = difftx_engine_cancel(m.engine, e->request);
}

TEST(CApi, CallbacksMayCancelButNotStepOrFree) {
  ModelPtr model(kMotif);
  Misuse m;
  m.engine = difftx_engine_create(model.m, nullptr);
  difftx_sampling_options o = difftx_sampling_default_options(model.m);
  o.max_tokens = 30;
  ASSERT_GT(difftx_engine_submit(m.engine, "The", &o, misuse, &m), 0);
  ASSERT_EQ(difftx_engine_run(m.engine), 0) << difftx_last_error();
  EXPECT_EQ(m.step, -1);
  EXPECT_NE(m.step_error.find("inside one of the engine's callbacks"), std::string::npos) << m.step_error;
  EXPECT_EQ(m.stats, 0);
  EXPECT_EQ(m.cancel, 0);
  difftx_engine_stats s;
  ASSERT_EQ(difftx_engine_get_stats(m.engine, &s), 0);
  EXPECT_EQ(s.finished[DIFFTX_FINISH_CANCELLED], 1);
  difftx_engine_free(m.engine);
}

// A work queue's callback: each request that ends submits the next (at most `budget` times).
struct Resubmit {
  difftx_engine* engine = nullptr;
  difftx_sampling_options options{};
  int submitted = 0, refused = 0, cancelled = 0, budget = 1000;
};

void resubmit(const difftx_token_event* e, void* user_data) {
  Resubmit& r = *static_cast<Resubmit*>(user_data);
  if (e->finish == DIFFTX_FINISH_NONE) return;
  r.cancelled += e->finish == DIFFTX_FINISH_CANCELLED;
  if (r.submitted >= r.budget) return;
  ++r.submitted;
  if (difftx_engine_submit(r.engine, "The", &r.options, resubmit, &r) < 0) ++r.refused;
}

// difftx_engine_free ends what is open as cancelled and refuses what callbacks submit meanwhile
// (it once ran those to their end, and forever where each submitted the next).
TEST(CApi, FreeCancelsWhatIsOpenAndRefusesNewRequests) {
  ModelPtr model(kMotif);
  Resubmit r;
  r.engine = difftx_engine_create(model.m, nullptr);
  r.options = difftx_sampling_default_options(model.m);
  r.options.max_tokens = 50;
  ASSERT_GT(difftx_engine_submit(r.engine, "The", &r.options, resubmit, &r), 0) << difftx_last_error();
  ASSERT_GE(difftx_engine_step(r.engine), 0) << difftx_last_error();
  difftx_engine_free(r.engine);
  EXPECT_EQ(r.cancelled, 1);
  EXPECT_EQ(r.submitted, 1);
  EXPECT_EQ(r.refused, 1);
}

// An engine's callback runs another engine, whose callback tries to free the first: refused, as
// from the first's own callback (it is in the middle of its step on this thread).
struct Nested {
  difftx_engine *outer = nullptr, *inner = nullptr;
  difftx_sampling_options options{};
  bool ran_inner = false;
  std::string free_error;
};

void inner_callback(const difftx_token_event* e, void* user_data) {
  Nested& n = *static_cast<Nested*>(user_data);
  if (e->finish == DIFFTX_FINISH_NONE || !n.free_error.empty()) return;
  difftx_engine_free(n.outer);
  n.free_error = difftx_last_error();
}

void outer_callback(const difftx_token_event* e, void* user_data) {
  Nested& n = *static_cast<Nested*>(user_data);
  if (e->finish == DIFFTX_FINISH_NONE || n.ran_inner) return;
  n.ran_inner = true;
  difftx_engine_submit(n.inner, "The", &n.options, inner_callback, &n);
  difftx_engine_run(n.inner);
}

TEST(CApi, AnEngineCannotBeFreedFromACallbackNestedInItsOwn) {
  ModelPtr model(kMotif);
  Nested n;
  n.outer = difftx_engine_create(model.m, nullptr);
  n.inner = difftx_engine_create(model.m, nullptr);
  n.options = difftx_sampling_default_options(model.m);
  n.options.max_tokens = 3;
  ASSERT_GT(difftx_engine_submit(n.outer, "The", &n.options, outer_callback, &n), 0) << difftx_last_error();
  ASSERT_EQ(difftx_engine_run(n.outer), 0) << difftx_last_error();
  EXPECT_TRUE(n.ran_inner);
  EXPECT_NE(n.free_error.find("inside one of the engine's callbacks"), std::string::npos) << n.free_error;
  difftx_engine_stats s;
  EXPECT_EQ(difftx_engine_get_stats(n.outer, &s), 0);  // still there
  difftx_engine_free(n.inner);
  difftx_engine_free(n.outer);
}

struct Steps {
  std::vector<int64_t> seen;
  int64_t stop_after = 0;
};

int32_t record_step(const difftx_train_step* step, void* user_data) {
  Steps& s = *static_cast<Steps*>(user_data);
  s.seen.push_back(step->step);
  return step->step < s.stop_after;
}

TEST(CApi, TrainStopsWhereTheCallbackSaysAndItsCheckpointConvertsAndAnalyses) {
  testing::WordDataset words;
  const fs::path run = words.root / "run";
  const std::string config = (fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/train/baseline.json").string();
  const std::string data = words.data().string(), out = run.string();
  difftx_train_options o = difftx_train_default_options();
  o.config = config.c_str();
  o.data = data.c_str();
  o.out = out.c_str();
  o.steps = 6;
  o.seq_len = 32;
  o.micro_batch = 2;
  o.warmup = 1;
  o.eval_every = 0;
  o.eval_batches = 1;
  o.checkpoint_every = 0;
  o.quiet = 1;
  Steps steps{{}, 3};
  difftx_train_summary summary;
  ASSERT_EQ(difftx_train(&o, record_step, &steps, &summary), 0) << difftx_last_error();
  EXPECT_EQ(steps.seen, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(summary.steps_done, 3);
  EXPECT_EQ(summary.stopped, 1);
  EXPECT_TRUE(std::isfinite(summary.train_loss));
  const fs::path checkpoint = run / "checkpoints" / "step_00000003";
  ASSERT_TRUE(fs::exists(checkpoint / "model.safetensors"));

  const fs::path bf16 = words.root / "bf16";
  ASSERT_EQ(difftx_convert(checkpoint.c_str(), bf16.c_str(), NULL, "bf16", NULL), 0) << difftx_last_error();
  EXPECT_EQ(difftx_convert(checkpoint.c_str(), bf16.c_str(), NULL, "bf16", NULL), -1);  // never overwritten
  EXPECT_NE(std::string(difftx_last_error()).find("exists and is not an empty directory"), std::string::npos);

  ModelPtr model(checkpoint);
  ASSERT_NE(model.m, nullptr) << difftx_last_error();
  char* eval = difftx_analyze(model.m, "eval", data.c_str(), R"({"seq_len": 32, "micro_batch": 2, "max_batches": 2})");
  ASSERT_NE(eval, nullptr) << difftx_last_error();
  const nlohmann::json e = nlohmann::json::parse(eval);
  difftx_string_free(eval);
  EXPECT_GT(e["val_loss"].get<double>(), 0);
  EXPECT_EQ(e["batches"], 2);
  char* mqar = difftx_analyze(model.m, "mqar", data.c_str(), R"({"pairs": 2, "queries": 2, "samples": 3})");
  ASSERT_NE(mqar, nullptr) << difftx_last_error();
  EXPECT_TRUE(nlohmann::json::parse(mqar).contains("accuracy")) << mqar;
  difftx_string_free(mqar);
  EXPECT_EQ(difftx_analyze(model.m, "eval", data.c_str(), R"({"seq_len": 32, "batch": 2})"), nullptr);
  EXPECT_NE(std::string(difftx_last_error()).find("unknown option 'batch'"), std::string::npos) << difftx_last_error();
}

}  // namespace
}  // namespace difftx
