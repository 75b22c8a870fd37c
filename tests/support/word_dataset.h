// A small prepared dataset for evaluation tests: 24 documents of random words from a
// ten-word vocabulary, a 300-token BPE, 20% val; made in a temporary folder, removed after.
#pragma once
#include <filesystem>

namespace difftx::testing {

struct WordDataset {
  WordDataset();
  ~WordDataset();
  WordDataset(const WordDataset&) = delete;
  WordDataset& operator=(const WordDataset&) = delete;

  std::filesystem::path root;
  std::filesystem::path data() const { return root / "data"; }  // the prepared dataset
};

}  // namespace difftx::testing
