// A small prepared dataset (trained 512-token BPE, train and val splits of generated prose) for
// the retrieval tests, built once per test binary, with its tokenizer and split readers.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "data/data_fixtures.h"
#include "data/prepare.h"
#include "data/split_reader.h"
#include "data/tokenizer.h"
#include "data/tokenizer_files.h"
#include "data/tasks/niah.h"

namespace difftx::retrieval::testing {

struct RetrievalData {
  data::testing::TempDir temp;
  std::filesystem::path dir;  // the prepared dataset
  data::Tokenizer tokenizer;
  data::SplitReader train, val;

  static std::filesystem::path prepare(const data::testing::TempDir& temp) {
    // Prose over a small vocabulary that includes the needle template's words and keys, so the
    // trained BPE keeps needles short, as a real vocabulary does.
    std::vector<std::string> words = {"the", "union", "is", "strong", "and", "we", "shall", "build", "roads",
                                      "schools", "of", "a", "nation", "peace", "1848", "trade", "war", "law",
                                      "The", "magic", "number", "for"};
    for (std::string_view key : needle_keys()) words.emplace_back(key);
    Rng rng(5);
    for (int doc = 0; doc < 30; ++doc) {
      std::ofstream out(temp / ("corpus/doc" + std::to_string(doc) + ".txt"));
      for (int w = 0; w < 600; ++w) out << words[rng.below(words.size())] << (w % 11 == 10 ? ".\n" : " ");
    }
    data::PrepareOptions o;
    o.corpus = {(temp / "corpus").string()};
    o.vocab_size = 512;
    o.out = temp / "data";
    o.val_fraction = 0.25;
    o.progress = false;
    data::prepare_dataset(o);
    return o.out;
  }
  RetrievalData()
      : dir((std::filesystem::create_directories(temp / "corpus"), prepare(temp))),
        tokenizer(data::load_tokenizer(dir.string())),
        train(dir, "train"),
        val(dir, "val") {}
};

inline const RetrievalData& retrieval_data() {
  static const RetrievalData data;
  return data;
}

}  // namespace difftx::retrieval::testing
