// Token shards: one file per piece of a split (train_0000.bin, val_0000.bin, ...), a 64-byte
// header and then the token ids, little-endian, uint16 when the vocabulary fits in 16 bits and
// uint32 otherwise. docs/FORMATS.md ("Token shards") is the normative description:
//   offset  0  8 bytes  magic "DTXTOKEN"
//   offset  8  u32      format version (1)
//   offset 12  u32      bytes per token id (2 or 4)
//   offset 16  u64      vocabulary size (every id is below it)
//   offset 24  u64      token count
//   offset 32  32 bytes zero (reserved)
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>

#include "data/mapped_file.h"
#include "io/atomic_file.h"

namespace difftx::data {

inline constexpr char kShardMagic[8] = {'D', 'T', 'X', 'T', 'O', 'K', 'E', 'N'};
inline constexpr uint32_t kShardVersion = 1;
inline constexpr size_t kShardHeaderBytes = 64;

// 2 when every id of a vocabulary of this size fits in a uint16, else 4.
int shard_token_bytes(int64_t vocab_size);

// Streams ids into a new shard; the file appears under its name only after commit().
class ShardWriter {
 public:
  ShardWriter(const std::filesystem::path& path, int64_t vocab_size);
  // Checks each id against the vocabulary (an error names the shard and the position).
  void append(const int32_t* ids, size_t count);
  void commit();
  int64_t tokens() const { return count_; }

 private:
  io::AtomicFileWriter file_;
  int64_t vocab_size_;
  int token_bytes_;
  int64_t count_ = 0;
};

// A shard opened for reading: memory-mapped, header and every id validated on open, so that
// a truncated file or an id outside the vocabulary is an error naming the file and position
// rather than garbage fed to a model.
class Shard {
 public:
  explicit Shard(const std::filesystem::path& path);

  int64_t tokens() const { return count_; }
  int64_t vocab_size() const { return vocab_size_; }
  int token_bytes() const { return token_bytes_; }
  const std::filesystem::path& path() const { return path_; }
  int32_t operator[](int64_t i) const {
    return token_bytes_ == 2 ? reinterpret_cast<const uint16_t*>(ids_)[i]
                             : static_cast<int32_t>(reinterpret_cast<const uint32_t*>(ids_)[i]);
  }
  // Copies ids [begin, begin + count) as int32.
  void copy(int64_t begin, int64_t count, int32_t* out) const;

 private:
  std::filesystem::path path_;
  MappedFile map_;
  const unsigned char* ids_ = nullptr;
  int64_t count_ = 0;
  int64_t vocab_size_ = 0;
  int token_bytes_ = 0;
};

}  // namespace difftx::data
