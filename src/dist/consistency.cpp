#include "dist/consistency.h"

#include <set>

#include "dist/text_collectives.h"

namespace difftx::dist {
namespace {

// "'/options/seed' is 2 here but 1 on rank 0; ..." for the first few keys that differ.
std::string differences(const nlohmann::json& mine, const nlohmann::json& reference) {
  const nlohmann::json a = mine.flatten(), b = reference.flatten();
  std::set<std::string> keys;
  for (const auto& [key, value] : a.items()) keys.insert(key);
  for (const auto& [key, value] : b.items()) keys.insert(key);
  std::string out;
  int listed = 0;
  for (const std::string& key : keys) {
    const bool here = a.contains(key), there = b.contains(key);
    if (here && there && a[key] == b[key]) continue;
    if (++listed > 3) {
      out += "; ...";
      break;
    }
    if (!out.empty()) out += "; ";
    out += "'" + key + "' is " + (here ? a[key].dump() : "absent") + " here but " +
           (there ? b[key].dump() : "absent") + " on rank 0";
  }
  return out;
}

}  // namespace

void require_same_inputs(Communicator& comm, const nlohmann::json& facts) {
  if (comm.size() == 1) return;
  const nlohmann::json reference = nlohmann::json::parse(broadcast_text(comm, facts.dump(), 0));
  const auto reports = all_gather_text(comm, differences(facts, reference), 1000);
  std::string message;
  for (int r = 0; r < comm.size(); ++r)
    if (!reports[r].empty()) message += "\n  rank " + std::to_string(r) + ": " + reports[r];
  if (!message.empty())
    throw CollectiveError("the ranks were not given the same inputs (every rank must run the same command on the "
                          "same data):" + message);
}

}  // namespace difftx::dist
