// `difftx bench tokenizer`: the data pipeline on one core (except where noted).
//  - encode/decode MB/s per encoding on Moby-Dick (the bar: >= 5 MB/s encoding), and the
//    pre-tokenizer alone, which bounds what BPE could gain: the tiktoken encodings, Llama 3's
//    and Qwen 3's tokenizer.json (when fetched), and cl100k_base written as a tokenizer.json,
//    which runs Hugging Face's merge-list rule on the same vocabulary as tiktoken's rule;
//  - BPE training of the default 8192-token vocabulary on SOTU + Moby-Dick;
//  - `prepare` end to end (all threads) and the loader's random-batch rate.
// Needs the default corpus (scripts/setup).
#include <omp.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "benches.h"
#include "core/error.h"
#include "core/timer.h"
#include "data/bpe_trainer.h"
#include "data/corpus.h"
#include "data/data_paths.h"
#include "data/hf_tokenizer.h"
#include "data/loader.h"
#include "data/prepare.h"
#include "data/tokenizer_files.h"
#include "io/input_file.h"
#include "measure.h"

namespace difftx::bench {
namespace fs = std::filesystem;
namespace {

void bench_encodings(bool json, const std::vector<std::string>& names, const std::string& text) {
  const double mb = text.size() / 1e6;
  for (const std::string& name : names) {
    const data::Tokenizer tok = data::load_tokenizer(name);
    std::vector<int32_t> ids;
    const Timing enc = measure([&] { ids = tok.encode(text); }, 2.0);
    std::string back;
    const Timing dec = measure([&] { back = tok.decode(ids); }, 0.5);
    DIFFTX_CHECK(back == text, "bench tokenizer: decode(encode(text)) differs from the text for ",
                 name);
    const data::PreTokenizer split(tok.parts().pre_tokenizer);
    int64_t pieces = 0;
    const Timing spl = measure([&] { split.split(text, [&](std::string_view) { ++pieces; }); }, 1.0);
    const std::string label = tok.tiktoken_family() ? tok.name() : fs::path(name).parent_path().filename().string() + "/" +
                                                                      fs::path(name).filename().string();
    print_row(json, {str("op", "encode"), str("tokenizer", label), num("text_mb", mb, 2),
                     num("tokens", static_cast<double>(ids.size()), 0),
                     num("encode_mb_s", mb / (enc.best_ms * 1e-3), 1),
                     num("encode_median_mb_s", mb / (enc.median_ms * 1e-3), 1),
                     num("split_only_mb_s", mb / (spl.best_ms * 1e-3), 1),
                     num("decode_mb_s", mb / (dec.best_ms * 1e-3), 0)});
  }
}

}  // namespace

int bench_tokenizer(cli::Args& args) {
  const bool json = args.flag("json");
  std::vector<std::string> names = args.list("tokenizer");
  args.finish();
  const fs::path tmp = fs::temp_directory_path() / ("difftx_bench_tokenizer_" + std::to_string(::getpid()));
  if (names.empty()) {
    names = {"r50k_base", "cl100k_base", "o200k_base"};
    data::write_hf_tokenizer(data::load_tokenizer("cl100k_base"), tmp / "cl100k_base");
    names.push_back((tmp / "cl100k_base" / data::kHfTokenizerFile).string());
    for (const char* hf : {"llama3", "qwen3"})
      if (const fs::path f = data::data_root() / "hf" / hf / data::kHfTokenizerFile; fs::exists(f)) names.push_back(f.string());
  }
  const fs::path text_path = data::data_root() / "moby-dick" / "data.txt";
  DIFFTX_CHECK(fs::exists(text_path), text_path.string(),
               " is missing: run scripts/setup to fetch the default corpus");
  const std::string moby = io::read_whole_file(text_path);

  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  bench_encodings(json, names, moby);

  // Vocabulary training on the default corpus (one thread: comparable run to run).
  const data::Corpus corpus = data::read_corpus(data::default_corpus_paths());
  std::vector<std::string_view> docs;
  for (const auto& d : corpus.documents) docs.push_back(d.text);
  Timer train_timer;
  const data::Tokenizer trained = data::train_bpe(docs, {.vocab_size = 8192});
  const double train_s = train_timer.seconds();
  print_row(json, {str("op", "bpe_train"), num("vocab_size", 8192, 0),
                   num("corpus_mb", corpus.text_bytes() / 1e6, 1), num("threads", 1, 0),
                   num("seconds", train_s, 2)});
  data::save_tokenizer(trained, tmp / "tokenizer");
  bench_encodings(json, {(tmp / "tokenizer").string()}, moby);
  omp_set_num_threads(threads);

  // prepare end to end with the trained tokenizer (all threads), then the loader.
  data::PrepareOptions o;
  o.corpus = data::default_corpus_paths();
  o.tokenizer = (tmp / "tokenizer").string();
  o.out = tmp / "dataset";
  o.progress = false;
  Timer prepare_timer;
  data::prepare_dataset(o);
  const double prepare_s = prepare_timer.seconds();
  print_row(json, {str("op", "prepare"), num("corpus_mb", corpus.text_bytes() / 1e6, 1),
                   num("threads", threads, 0), num("seconds", prepare_s, 2),
                   num("mb_s", corpus.text_bytes() / 1e6 / prepare_s, 1)});
  const int64_t B = 16, T = 1024;
  data::TokenLoader loader(o.out, "train", {.batch = B, .seq_len = T, .seed = 1});
  std::vector<int32_t> in(B * T), tg(B * T);
  const Timing batch = measure([&] { loader.next(in.data(), tg.data()); }, 0.5);
  print_row(json, {str("op", "loader"), str("sampling", "random"), num("B", B, 0), num("T", T, 0),
                   num("us_per_batch", batch.best_ms * 1e3, 1),
                   num("mtokens_s", B * T / (batch.best_ms * 1e-3) / 1e6, 0)});
  fs::remove_all(tmp);
  return 0;
}

}  // namespace difftx::bench
