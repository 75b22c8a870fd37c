#include "support/word_dataset.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>

#include "core/rng.h"
#include "data/prepare.h"

namespace difftx::testing {

namespace fs = std::filesystem;

WordDataset::WordDataset() {
  static std::atomic<int> counter{0};
  root = fs::temp_directory_path() /
         ("difftx_word_dataset_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(root);
  fs::create_directories(root / "corpus");
  const char* words[] = {"the", "union", "is", "strong", "and", "we", "shall", "build", "roads", "schools"};
  Rng rng(3);
  for (int doc = 0; doc < 24; ++doc) {
    std::ofstream out(root / "corpus" / ("doc" + std::to_string(doc) + ".txt"));
    for (int w = 0; w < 300; ++w) out << words[rng.below(10)] << (w % 12 == 11 ? ".\n" : " ");
  }
  data::PrepareOptions o;
  o.corpus = {(root / "corpus").string()};
  o.vocab_size = 300;
  o.out = data();
  o.val_fraction = 0.2;
  o.progress = false;
  data::prepare_dataset(o);
}

WordDataset::~WordDataset() {
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace difftx::testing
