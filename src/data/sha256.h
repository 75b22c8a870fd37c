// SHA-256 (FIPS 180-4), for the source checksums recorded in a prepared dataset's metadata.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace difftx::data {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // The digest as 64 lowercase hex digits; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  void compress(const unsigned char* block);

  std::array<uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace difftx::data
