// `difftx prepare`: corpus -> tokenizer -> train/val token shards (src/data/prepare.h).
#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "data/prepare.h"

namespace difftx::cli {
namespace {

int run_prepare(Args& args) {
  const bool use_default = args.flag("default"), use_books = args.flag("books");
  DIFFTX_CHECK(!(use_default && use_books), "prepare: --default and --books exclude each other");
  const char* named = use_default ? "--default" : "--books";
  data::PrepareOptions o = use_default ? data::default_prepare_options()
                           : use_books ? data::books_prepare_options()
                                       : data::PrepareOptions{};
  const auto corpus = args.list("corpus");
  const auto tokenizer = args.get("tokenizer");
  const auto out = args.get("out");
  o.val_fraction = args.get_double("val-fraction", o.val_fraction, NumberRange{0, 1, true, true});
  o.vocab_size = args.get_int("vocab-size", tokenizer ? 0 : o.vocab_size, IntRange{0, int64_t{1} << 24});
  o.max_document_bytes = args.get_int("max-document-bytes", o.max_document_bytes, kNonNegative);
  o.shard_tokens = args.get_int("shard-tokens", o.shard_tokens, kPositive);
  o.progress = !args.flag("quiet");
  o.spelling = OptionSpelling::flag;
  args.finish();
  if (use_default || use_books) {
    DIFFTX_CHECK(corpus.empty(), "prepare: ", named, " brings its own corpus; drop --corpus");
  } else {
    DIFFTX_CHECK(!corpus.empty(), "prepare: give --corpus PATH... (or --default, --books)");
    DIFFTX_CHECK(out.has_value(), "prepare: give --out DIR");
    o.corpus = corpus;
  }
  DIFFTX_CHECK(!(tokenizer && o.vocab_size > 0),
               "prepare: --tokenizer and --vocab-size exclude each other (use an existing "
               "tokenizer, or train one of N tokens)");
  if (tokenizer) o.tokenizer = *tokenizer;
  if (out) o.out = *out;
  const auto meta = data::prepare_dataset(o);
  std::printf("%s: %lld train + %lld val tokens, vocabulary %lld (%s)\n", o.out.c_str(),
              (long long)meta["splits"]["train"]["tokens"].get<int64_t>(),
              (long long)meta["splits"]["val"]["tokens"].get<int64_t>(),
              (long long)meta["tokenizer"]["vocab_size"].get<int64_t>(),
              meta["tokenizer"]["name"].get<std::string>().c_str());
  return 0;
}

}  // namespace

DIFFTX_COMMAND(
    "prepare", "tokenize a corpus into train/val token shards for training",
    "  --corpus PATH...          text files, JSONL files ({\"text\": ...} per line), directories\n"
    "  --tokenizer NAME_OR_FILE  an existing tokenizer (cl100k_base, r50k_base, a file, a dir)\n"
    "  --vocab-size N            or train a BPE vocabulary of N tokens on the train split\n"
    "  --out DIR                 output: train_*.bin, val_*.bin, tokenizer.*, metadata.json\n"
    "  --val-fraction F          share of the text (whole documents) for validation [0.05]\n"
    "  --max-document-bytes N    cut longer documents into passages at paragraph ends, so that\n"
    "                            whole books still split into train and val [0: never]\n"
    "  --shard-tokens N          tokens per shard file at most [100000000]\n"
    "  --quiet                   no progress lines\n"
    "  --default                 SOTU + Moby-Dick, trained 8192-token vocabulary, out\n"
    "                            <data>/default (override with --out, --vocab-size, --tokenizer)\n"
    "  --books                   the default corpus and 17 public-domain Project Gutenberg books\n"
    "                            (about twice the text), passages of 32 KiB, trained 8192-token\n"
    "                            vocabulary, out <data>/books (overrides as for --default)",
    run_prepare);

}  // namespace difftx::cli
