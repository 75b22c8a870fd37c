#include "data/shard.h"

#include <cstring>
#include <vector>

#include "core/error.h"

namespace difftx::data {
namespace {

// Little-endian field access; the code assumes a little-endian host (x86-64, AArch64).
template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// The first position whose id is >= vocab, or count when all are in range.
template <typename Id>
int64_t first_out_of_range(const Id* ids, int64_t count, int64_t vocab) {
  constexpr int64_t kBlock = 4096;
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const int64_t end = std::min(count, begin + kBlock);
    Id max_id = 0;
    for (int64_t i = begin; i < end; ++i) max_id = ids[i] > max_id ? ids[i] : max_id;
    if (static_cast<int64_t>(max_id) < vocab) continue;
    for (int64_t i = begin; i < end; ++i)
      if (static_cast<int64_t>(ids[i]) >= vocab) return i;
  }
  return count;
}

constexpr int64_t kMaxVocab = int64_t{1} << 31;  // ids are int32 once loaded

}  // namespace

int shard_token_bytes(int64_t vocab_size) { return vocab_size <= 65536 ? 2 : 4; }

ShardWriter::ShardWriter(const std::filesystem::path& path, int64_t vocab_size)
    : file_(path), vocab_size_(vocab_size), token_bytes_(shard_token_bytes(vocab_size)) {
  DIFFTX_CHECK(vocab_size > 0 && vocab_size <= kMaxVocab, path.string(), ": vocabulary size ",
               vocab_size, " is outside [1, 2^31]");
  unsigned char header[kShardHeaderBytes] = {};
  file_.write(header, sizeof header);  // the real header is written by commit()
}

void ShardWriter::append(const int32_t* ids, size_t count) {
  std::vector<unsigned char> bytes(count * token_bytes_);
  for (size_t i = 0; i < count; ++i) {
    DIFFTX_CHECK(ids[i] >= 0 && ids[i] < vocab_size_, file_.target().string(), ": token id ", ids[i],
                 " at position ", count_ + static_cast<int64_t>(i), " is outside [0, ",
                 vocab_size_, ")");
    if (token_bytes_ == 2)
      store(bytes.data() + 2 * i, static_cast<uint16_t>(ids[i]));
    else
      store(bytes.data() + 4 * i, static_cast<uint32_t>(ids[i]));
  }
  file_.write(bytes.data(), bytes.size());
  count_ += static_cast<int64_t>(count);
}

void ShardWriter::commit() {
  unsigned char header[kShardHeaderBytes] = {};
  std::memcpy(header, kShardMagic, sizeof kShardMagic);
  store(header + 8, kShardVersion);
  store(header + 12, static_cast<uint32_t>(token_bytes_));
  store(header + 16, static_cast<uint64_t>(vocab_size_));
  store(header + 24, static_cast<uint64_t>(count_));
  file_.write_at(0, header, sizeof header);
  file_.commit();
}

Shard::Shard(const std::filesystem::path& path) : path_(path), map_(path) {
  const std::string where = path.string();
  const unsigned char* h = map_.data();
  DIFFTX_CHECK(map_.size() >= kShardHeaderBytes, where, ": truncated shard: ", map_.size(),
               " bytes, shorter than the ", kShardHeaderBytes, "-byte header");
  DIFFTX_CHECK(std::memcmp(h, kShardMagic, sizeof kShardMagic) == 0, where,
               ": not a token shard (expected magic \"DTXTOKEN\")");
  const auto version = load<uint32_t>(h + 8);
  DIFFTX_CHECK(version == kShardVersion, where, ": shard format version ", version,
               ", expected ", kShardVersion);
  token_bytes_ = static_cast<int>(load<uint32_t>(h + 12));
  DIFFTX_CHECK(token_bytes_ == 2 || token_bytes_ == 4, where, ": bytes per token is ",
               token_bytes_, ", expected 2 or 4");
  const auto vocab = load<uint64_t>(h + 16);
  DIFFTX_CHECK(vocab > 0 && vocab <= static_cast<uint64_t>(kMaxVocab), where,
               ": vocabulary size ", vocab, " is outside [1, 2^31]");
  vocab_size_ = static_cast<int64_t>(vocab);
  const auto count = load<uint64_t>(h + 24);
  for (size_t i = 32; i < kShardHeaderBytes; ++i)
    DIFFTX_CHECK(h[i] == 0, where, ": reserved header byte ", i, " is not zero");
  const uint64_t payload = map_.size() - kShardHeaderBytes;
  DIFFTX_CHECK(count <= payload / token_bytes_ && payload == count * token_bytes_, where,
               ": truncated or oversized shard: the header says ", count, " tokens (",
               count * token_bytes_, " bytes after the header) but the file holds ", payload);
  count_ = static_cast<int64_t>(count);
  ids_ = h + kShardHeaderBytes;
  const int64_t bad = token_bytes_ == 2
      ? first_out_of_range(reinterpret_cast<const uint16_t*>(ids_), count_, vocab_size_)
      : first_out_of_range(reinterpret_cast<const uint32_t*>(ids_), count_, vocab_size_);
  const uint64_t bad_id = bad == count_ ? 0
                         : token_bytes_ == 2 ? reinterpret_cast<const uint16_t*>(ids_)[bad]
                                             : reinterpret_cast<const uint32_t*>(ids_)[bad];
  DIFFTX_CHECK(bad == count_, where, ": token id ", bad_id,
               " at position ", bad, " is not below the vocabulary size ", vocab_size_);
}

void Shard::copy(int64_t begin, int64_t count, int32_t* out) const {
  DIFFTX_CHECK(begin >= 0 && count >= 0 && begin + count <= count_, path_.string(),
               ": read of [", begin, ", ", begin + count, ") outside its ", count_, " tokens");
  if (token_bytes_ == 2) {
    const auto* ids = reinterpret_cast<const uint16_t*>(ids_) + begin;
    for (int64_t i = 0; i < count; ++i) out[i] = ids[i];
  } else {
    const auto* ids = reinterpret_cast<const uint32_t*>(ids_) + begin;
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<int32_t>(ids[i]);
  }
}

}  // namespace difftx::data
