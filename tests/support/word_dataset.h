// A small prepared dataset for evaluation tests: 24 documents of random words from a
// ten-word vocabulary, a 300-token BPE, 20% val; made in a temporary folder, removed after.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>

namespace difftx::testing {

struct WordDataset {
  WordDataset();
  ~WordDataset();
  WordDataset(const WordDataset&) = delete;
  WordDataset& operator=(const WordDataset&) = delete;

  std::filesystem::path root;
  std::filesystem::path data() const { return root / "data"; }  // the prepared dataset
};

// The val split's cross-entropy computed directly, in double, over its sequential windows of T
// tokens (the perplexity tests' reference): the summed loss and the targets scored, and the
// windows read. logits_of(ids, out) writes the [T, V] logits of T ids.
struct DirectLoss {
  double sum = 0;
  int64_t count = 0, windows = 0;
};
DirectLoss direct_val_loss(const WordDataset& ds, int64_t T, int64_t V,
                           const std::function<void(const int32_t*, float*)>& logits_of);

}  // namespace difftx::testing
