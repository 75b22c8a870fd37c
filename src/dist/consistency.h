// The startup check that every rank of a run was given the same inputs (a config file edited on
// one host, a different --seed, another copy of the data would otherwise train silently wrong).
#pragma once
#include <nlohmann/json.hpp>

#include "dist/communicator.h"

namespace difftx::dist {

// `facts` is a JSON object of what must agree across ranks (model config, options, data
// fingerprints). Rank 0's facts go to every rank, each names the keys where its own differ,
// and when any rank differs every rank throws the same CollectiveError listing them.
void require_same_inputs(Communicator& comm, const nlohmann::json& facts);

}  // namespace difftx::dist
