#include "dist/text_collectives.h"

#include <algorithm>
#include <cstring>

namespace difftx::dist {

std::string broadcast_text(Communicator& comm, const std::string& text, int root) {
  uint64_t length = text.size();
  comm.broadcast(&length, sizeof length, root);
  std::string out = comm.rank() == root ? text : std::string(length, '\0');
  comm.broadcast(out.data(), static_cast<int64_t>(length), root);
  return out;
}

std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text, size_t max_bytes) {
  // Fixed-size slots: a length prefix and up to max_bytes of text.
  const size_t slot = sizeof(uint64_t) + max_bytes;
  std::string buffer(slot * comm.size(), '\0');
  const uint64_t length = std::min(text.size(), max_bytes);
  char* mine = buffer.data() + slot * comm.rank();
  std::memcpy(mine, &length, sizeof length);
  std::memcpy(mine + sizeof length, text.data(), length);
  comm.all_gather_bytes(buffer.data(), static_cast<int64_t>(slot));
  std::vector<std::string> out;
  for (int r = 0; r < comm.size(); ++r) {
    const char* at = buffer.data() + slot * r;
    uint64_t n = 0;
    std::memcpy(&n, at, sizeof n);
    out.emplace_back(at + sizeof n, std::min<uint64_t>(n, max_bytes));
  }
  return out;
}

}  // namespace difftx::dist
