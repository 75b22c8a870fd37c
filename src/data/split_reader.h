// Random access to the token stream of one split of a prepared dataset (dataset.h): its
// shards, memory-mapped and validated, read as one sequence of ids across shard boundaries.
// The loader's windows and the retrieval tasks' haystacks are both slices of it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/shard.h"

namespace difftx::data {

class SplitReader {
 public:
  // Errors: a missing directory or split, a truncated shard, ids outside the vocabulary, a
  // shard whose vocabulary differs from the metadata's, a token count the metadata disagrees
  // with.
  SplitReader(const std::filesystem::path& dir, const std::string& split);

  // Copies ids [begin, begin + count) of the stream as int32.
  void copy(int64_t begin, int64_t count, int32_t* out) const;

  int64_t tokens() const { return total_; }
  const DatasetInfo& dataset() const { return info_; }
  const std::string& split() const { return split_; }
  // "train_0000.bin, train_0001.bin": the shards, for messages.
  const std::string& shard_names() const { return names_; }

 private:
  DatasetInfo info_;
  std::string split_;
  std::vector<Shard> shards_;
  std::vector<int64_t> shard_begin_;  // stream offset of each shard's first token
  int64_t total_ = 0;
  std::string names_;
};

}  // namespace difftx::data
