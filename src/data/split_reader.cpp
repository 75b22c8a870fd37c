#include "data/split_reader.h"

#include <algorithm>

#include "core/error.h"

namespace difftx::data {

SplitReader::SplitReader(const std::filesystem::path& dir, const std::string& split)
    : info_(read_dataset(dir)), split_(split) {
  auto it = info_.splits.find(split);
  DIFFTX_CHECK(it != info_.splits.end(), dir.string(), ": no split '", split, "' in ", kMetadataFile);
  for (const std::string& name : it->second.shards) {
    shards_.emplace_back(dir / name);
    const Shard& s = shards_.back();
    DIFFTX_CHECK(s.vocab_size() == info_.vocab_size, s.path().string(), ": vocabulary size ", s.vocab_size(),
                 " differs from ", info_.vocab_size, " in ", kMetadataFile);
    shard_begin_.push_back(total_);
    total_ += s.tokens();
    names_ += (names_.empty() ? "" : ", ") + name;
  }
  DIFFTX_CHECK(total_ == it->second.tokens, dir.string(), ": split '", split, "' has ", total_,
               " tokens in its shards but ", kMetadataFile, " says ", it->second.tokens);
}

void SplitReader::copy(int64_t begin, int64_t count, int32_t* out) const {
  DIFFTX_CHECK(begin >= 0 && count >= 0 && begin + count <= total_, info_.dir.string(), ": read of [", begin, ", ",
               begin + count, ") outside the ", total_, " tokens of split '", split_, "'");
  auto it = std::upper_bound(shard_begin_.begin(), shard_begin_.end(), begin);
  size_t s = static_cast<size_t>(it - shard_begin_.begin()) - 1;
  while (count > 0) {
    const int64_t local = begin - shard_begin_[s];
    const int64_t take = std::min(count, shards_[s].tokens() - local);
    shards_[s].copy(local, take, out);
    out += take;
    begin += take;
    count -= take;
    ++s;
  }
}

}  // namespace difftx::data
