// `difftx prepare`: corpus -> (trained) tokenizer -> train/val token shards + metadata, in one
// dataset directory (dataset.h). Deterministic: the same corpus and options give the same
// bytes in every output file, whatever the thread count. The corpus text is held in memory
// (the validation split and the vocabulary need all of it); token ids are written as they are
// made, a few MB of text at a time.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/interrupt.h"
#include "core/option_name.h"

namespace difftx::data {

struct PrepareOptions {
  std::vector<std::string> corpus;  // files and directories (corpus.h)
  std::string tokenizer;            // name or path (tokenizer_files.h), when not training
  int64_t vocab_size = 0;           // > 0: train a BPE vocabulary of this size on the train split
  std::filesystem::path out;
  // The share of the corpus's text bytes that goes to validation, taken as whole documents.
  double val_fraction = 0.05;
  // > 0: documents longer than this are cut into passages at paragraph ends first
  // (split_long_documents in corpus.h).
  int64_t max_document_bytes = 0;
  int64_t shard_tokens = 100'000'000;  // tokens per shard file at most
  bool progress = true;                // progress lines on stderr
  // Called once the corpus is read, after every BPE merge and after every block of documents
  // encoded (core/interrupt.h).
  Interrupt interrupt;
  OptionSpelling spelling = OptionSpelling::field;  // how errors name the options above
};

// The --default dataset: SOTU + Moby-Dick with a trained 8192-token vocabulary, written to
// data_root()/default.
PrepareOptions default_prepare_options();

// The --books dataset: the books corpus (corpus.h) in passages of at most 32 KiB with a trained
// 8192-token vocabulary, written to data_root()/books.
PrepareOptions books_prepare_options();

// Which documents go to validation: sort the documents by a hash of their text (index breaks
// ties) and take them in that order until they hold val_fraction of the text bytes, always
// leaving at least one for training. With val_fraction > 0, fewer than two documents is an
// error (a document is never split) naming the options as `spelling` does.
std::vector<bool> choose_validation_documents(const std::vector<std::string_view>& documents,
                                              double val_fraction, OptionSpelling spelling);

// Runs the pipeline and returns the metadata it wrote to out/metadata.json. out is touched only
// once the corpus is read and the tokenizer trained; then metadata.json is removed first and
// written last: a run that fails or is interrupted after that leaves out without it (read_dataset
// refuses it), with the files finished so far and no partial shard.
nlohmann::json prepare_dataset(const PrepareOptions& options);

}  // namespace difftx::data
