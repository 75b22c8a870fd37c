#include "data/prepare.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "core/parallel_errors.h"
#include "core/timer.h"
#include "data/bpe_trainer.h"
#include "data/corpus.h"
#include "data/data_paths.h"
#include "data/dataset.h"
#include "data/shard.h"
#include "data/token_table.h"
#include "data/tokenizer_files.h"
#include "data/utf8.h"
#include "io/atomic_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

// Progress on stderr: rewritten in place on a terminal, only the last line otherwise.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled), tty_(enabled && ::isatty(2)) {}
  void update(const char* what, double done_mb, double total_mb) {
    if (!tty_) return;
    const double s = timer_.seconds(), rate = done_mb / std::max(s, 1e-9);
    std::fprintf(stderr, "\rprepare: %s %.1f/%.1f MB (%.0f%%) %.2f MB/s ETA %.0fs   ", what,
                 done_mb, total_mb, 100 * done_mb / std::max(total_mb, 1e-9), rate,
                 (total_mb - done_mb) / std::max(rate, 1e-9));
  }
  void finish(const std::string& line) {
    if (!enabled_) return;
    std::fprintf(stderr, "%sprepare: %s\n", tty_ ? "\r" : "", line.c_str());
  }
  void restart() { timer_.reset(); }
  double seconds() const { return timer_.seconds(); }

 private:
  bool enabled_, tty_;
  Timer timer_;
};

struct SplitOutput {
  std::string name;
  int64_t documents = 0, bytes = 0, tokens = 0;
  std::vector<std::pair<std::string, int64_t>> shards;  // file, tokens
  std::unique_ptr<ShardWriter> writer;
};

// Appends ids to a split, starting a new shard file whenever the current one is full.
void append(SplitOutput& split, const fs::path& out, int64_t vocab_size, int64_t shard_tokens,
            const std::vector<int32_t>& ids) {
  size_t done = 0;
  while (done < ids.size()) {
    if (split.writer && split.writer->tokens() == shard_tokens) {
      split.writer->commit();
      split.shards.back().second = split.writer->tokens();
      split.writer.reset();
    }
    if (!split.writer) {
      const std::string name = shard_file_name(split.name, static_cast<int64_t>(split.shards.size()));
      split.writer = std::make_unique<ShardWriter>(out / name, vocab_size);
      split.shards.push_back({name, 0});
    }
    const size_t take = std::min<size_t>(ids.size() - done, shard_tokens - split.writer->tokens());
    split.writer->append(ids.data() + done, take);
    done += take;
  }
  split.tokens += static_cast<int64_t>(ids.size());
}

// The dataset's tokenizer: trained on the train documents (--vocab-size) or loaded (--tokenizer);
// `meta` gets where it came from.
std::unique_ptr<Tokenizer> make_tokenizer(const PrepareOptions& o, const std::vector<std::string_view>& texts,
                                          const std::vector<bool>& is_val, Progress& progress,
                                          nlohmann::ordered_json& meta) {
  if (o.vocab_size <= 0) {
    meta["source"] = o.tokenizer;
    return std::make_unique<Tokenizer>(load_tokenizer(o.tokenizer));
  }
  std::vector<std::string_view> train_texts;
  for (size_t i = 0; i < texts.size(); ++i)
    if (!is_val[i]) train_texts.push_back(texts[i]);
  BpeTrainingOptions bpe;
  bpe.vocab_size = o.vocab_size;
  bpe.interrupt = o.interrupt;
  bpe.progress = [&](int64_t done, int64_t total) {
    if (o.progress && ::isatty(2))
      std::fprintf(stderr, "\rprepare: training BPE: %lld/%lld merges   ", (long long)done, (long long)total);
  };
  Timer train_timer;
  auto tok = std::make_unique<Tokenizer>(train_bpe(train_texts, bpe));
  progress.finish("trained a " + std::to_string(tok->vocab_size()) + "-token BPE vocabulary on " +
                  std::to_string(train_texts.size()) + " documents in " +
                  std::to_string(static_cast<int>(std::lround(train_timer.seconds()))) + " s");
  meta["source"] = "trained";
  meta["trained_vocab_size"] = o.vocab_size;
  meta["trained_on"] = "train split";
  return tok;
}

// Encodes every document into its split's shards: in blocks of documents (parallel inside a
// block), written in document order.
void encode_splits(const PrepareOptions& o, const Corpus& corpus, const std::vector<std::string_view>& texts,
                   const std::vector<bool>& is_val, const Tokenizer& tok, Progress& progress,
                   SplitOutput (&splits)[2]) {
  const double total_mb = static_cast<double>(corpus.text_bytes()) / 1e6;
  progress.restart();
  constexpr size_t kBlockBytes = 4 << 20;
  int64_t done_bytes = 0;
  for (size_t begin = 0; begin < texts.size();) {
    size_t end = begin, block_bytes = 0;
    while (end < texts.size() && (end == begin || block_bytes < kBlockBytes)) block_bytes += texts[end++].size();
    std::vector<std::vector<int32_t>> ids(end - begin);
    ParallelErrors errors;  // the first failing document's, with its file named
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = begin; i < end; ++i) {
      errors.run(static_cast<int64_t>(i), [&] {
        try {
          ids[i - begin].push_back(tok.end_of_text());
          tok.encode_append(texts[i], ids[i - begin]);
        } catch (const std::exception& e) {
          fail(corpus.sources[corpus.documents[i].source].path, ": ", e.what());
        }
      });
    }
    errors.rethrow();
    for (size_t i = begin; i < end; ++i) {
      SplitOutput& split = splits[is_val[i] ? 1 : 0];
      append(split, o.out, tok.vocab_size(), o.shard_tokens, ids[i - begin]);
      ++split.documents;
      split.bytes += static_cast<int64_t>(texts[i].size());
    }
    done_bytes += static_cast<int64_t>(block_bytes);
    progress.update("encoded", done_bytes / 1e6, total_mb);
    begin = end;
    if (o.interrupt) o.interrupt();
  }
  for (SplitOutput& split : splits)
    if (split.writer) {
      split.writer->commit();
      split.shards.back().second = split.writer->tokens();
    }
  const double seconds = progress.seconds();
  char line[256];
  std::snprintf(line, sizeof line, "encoded %.1f MB in %.1f s (%.2f MB/s): %lld train + %lld val tokens", total_mb,
                seconds, total_mb / std::max(seconds, 1e-9), (long long)splits[0].tokens, (long long)splits[1].tokens);
  progress.finish(line);
}

// metadata.json (docs/FORMATS.md).
nlohmann::ordered_json dataset_metadata(const PrepareOptions& o, const Corpus& corpus, const Tokenizer& tok,
                                        const SplitOutput (&splits)[2], nlohmann::ordered_json tokenizer_meta) {
  nlohmann::ordered_json meta;
  meta["format"] = "difftx-dataset";
  meta["version"] = 1;
  tokenizer_meta["name"] = tok.name();
  tokenizer_meta["vocab_size"] = tok.vocab_size();
  tokenizer_meta["end_of_text"] = tok.end_of_text();
  tokenizer_meta["files"] = saved_tokenizer_files(tok);
  meta["tokenizer"] = tokenizer_meta;
  meta["dtype"] = shard_token_bytes(tok.vocab_size()) == 2 ? "uint16" : "uint32";
  meta["document_separator"] = "end_of_text before every document";
  meta["val_fraction"] = o.val_fraction;
  if (o.max_document_bytes > 0) meta["max_document_bytes"] = o.max_document_bytes;
  meta["sources"] = nlohmann::ordered_json::array();
  for (const CorpusSource& s : corpus.sources)
    meta["sources"].push_back({{"path", s.path}, {"sha256", s.sha256}, {"bytes", s.bytes}, {"documents", s.documents}});
  for (const SplitOutput& split : splits) {
    nlohmann::ordered_json shards = nlohmann::ordered_json::array();
    for (const auto& [file, n] : split.shards) shards.push_back({{"file", file}, {"tokens", n}});
    meta["splits"][split.name] = {
        {"documents", split.documents}, {"bytes", split.bytes}, {"tokens", split.tokens}, {"shards", shards}};
  }
  return meta;
}

}  // namespace

PrepareOptions default_prepare_options() {
  PrepareOptions o;
  o.corpus = default_corpus_paths();
  o.vocab_size = 8192;
  o.out = data_root() / "default";
  return o;
}

PrepareOptions books_prepare_options() {
  PrepareOptions o;
  o.corpus = books_corpus_paths();
  o.vocab_size = 8192;
  o.max_document_bytes = 32768;
  o.out = data_root() / "books";
  return o;
}

std::vector<bool> choose_validation_documents(const std::vector<std::string_view>& documents,
                                              double val_fraction, OptionSpelling spelling) {
  const std::string fraction = option_name("val_fraction", spelling);
  DIFFTX_CHECK(val_fraction >= 0 && val_fraction < 1, fraction, " ", val_fraction, " is outside [0, 1)");
  std::vector<bool> val(documents.size(), false);
  if (val_fraction == 0) return val;
  DIFFTX_CHECK(documents.size() >= 2, fraction, " ", val_fraction,
               " needs at least 2 documents (whole documents go to validation), got ", documents.size(),
               ": give several files or a JSONL file, cut long ones with ", option_name("max_document_bytes", spelling),
               ", or ", fraction, " 0");
  std::vector<std::pair<uint64_t, size_t>> order;
  int64_t total = 0;
  for (size_t i = 0; i < documents.size(); ++i) {
    order.push_back({TokenTable::hash(documents[i].data(), documents[i].size()), i});
    total += static_cast<int64_t>(documents[i].size());
  }
  std::sort(order.begin(), order.end());
  const double target = val_fraction * static_cast<double>(total);
  double taken = 0;
  for (size_t k = 0; k + 1 < order.size() && taken < target; ++k) {
    val[order[k].second] = true;
    taken += static_cast<double>(documents[order[k].second].size());
  }
  return val;
}

// metadata.json records the --tokenizer given and every source's path as JSON strings, which
// must be UTF-8: a name that is not is refused before anything is written.
void check_recorded_names(const PrepareOptions& o, const Corpus& corpus) {
  const char* why = "; metadata.json records it as UTF-8 text: rename it";
  try {
    if (o.vocab_size <= 0) check_utf8(o.tokenizer, option_name("tokenizer", o.spelling) + " '" + o.tokenizer + "'");
    for (const CorpusSource& s : corpus.sources) check_utf8(s.path, "corpus file name '" + s.path + "'");
  } catch (const Error& e) {
    fail(e.what(), why);
  }
}

nlohmann::json prepare_dataset(const PrepareOptions& o) {
  DIFFTX_CHECK(!o.out.empty(), "prepare: no output directory");
  const auto name = [&](std::string_view field) { return option_name(field, o.spelling); };
  DIFFTX_CHECK(o.shard_tokens > 0, "prepare: ", name("shard_tokens"), " must be positive");
  DIFFTX_CHECK(o.vocab_size > 0 || !o.tokenizer.empty(), "prepare: give ", name("tokenizer"), " NAME_OR_FILE or ",
               name("vocab_size"), " N to train one");
  Progress progress(o.progress);
  Corpus corpus = read_corpus(o.corpus);
  split_long_documents(corpus, o.max_document_bytes);
  check_recorded_names(o, corpus);
  std::vector<std::string_view> texts;
  for (const Document& d : corpus.documents) texts.push_back(d.text);
  const std::vector<bool> is_val = choose_validation_documents(texts, o.val_fraction, o.spelling);
  if (o.interrupt) o.interrupt();

  nlohmann::ordered_json tokenizer_meta;
  const std::unique_ptr<Tokenizer> tok = make_tokenizer(o, texts, is_val, progress, tokenizer_meta);
  // Only now is out touched. Without metadata the directory reads as unfinished until the new one
  // is complete.
  std::error_code ec;
  fs::create_directories(o.out, ec);
  DIFFTX_CHECK(!ec, o.out.string(), ": cannot create directory (", ec.message(), ")");
  fs::remove(o.out / kMetadataFile, ec);
  save_tokenizer(*tok, o.out);
  SplitOutput splits[2];
  splits[0].name = "train";
  splits[1].name = "val";
  encode_splits(o, corpus, texts, is_val, *tok, progress, splits);
  const nlohmann::ordered_json meta = dataset_metadata(o, corpus, *tok, splits, tokenizer_meta);
  io::write_file_atomically(o.out / kMetadataFile, meta.dump(2) + "\n");
  return nlohmann::json::parse(meta.dump());
}

}  // namespace difftx::data
