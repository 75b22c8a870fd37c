// Strings through the byte collectives of a Communicator.
#pragma once
#include <string>
#include <vector>

#include "dist/communicator.h"

namespace difftx::dist {

// root's text on every rank (`text` matters on root only).
std::string broadcast_text(Communicator& comm, const std::string& text, int root);

// Every rank's text, indexed by rank; texts longer than max_bytes are cut to max_bytes.
std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text, size_t max_bytes);

}  // namespace difftx::dist
