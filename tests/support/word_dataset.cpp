#include "support/word_dataset.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "data/loader.h"
#include "data/prepare.h"
#include "model/decoder.h"

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

DirectLoss direct_val_loss(const WordDataset& ds, int64_t T, int64_t V,
                           const std::function<void(const int32_t*, float*)>& logits_of) {
  data::TokenLoader windows(ds.data(), "val", {.batch = 1, .seq_len = T, .sampling = data::Sampling::sequential});
  std::vector<int32_t> in(T), tgt(T);
  std::vector<float> logits(T * V);
  DirectLoss out;
  while (windows.next(in.data(), tgt.data()) > 0) {
    logits_of(in.data(), logits.data());
    for (int64_t t = 0; t < T; ++t) {
      if (tgt[t] == model::kIgnoreId) continue;
      const float* row = logits.data() + t * V;
      double mx = row[0], z = 0;
      for (int64_t v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
      for (int64_t v = 0; v < V; ++v) z += std::exp(row[v] - mx);
      out.sum += mx + std::log(z) - row[tgt[t]];
      ++out.count;
    }
  }
  out.windows = windows.windows();
  return out;
}

}  // namespace difftx::testing
