#include "io/safetensors_set.h"

#include <algorithm>

#include "core/error.h"
#include "io/json_file.h"

namespace difftx::io {
namespace fs = std::filesystem;
namespace {

// A shard must be a plain file name: no directory part, so that an index cannot reach outside
// the model directory, and no control character (a NUL would end the name the system opens).
void check_shard_name(const std::string& shard, const fs::path& index) {
  const bool control = std::any_of(shard.begin(), shard.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; });
  DIFFTX_CHECK(!shard.empty() && !control && shard.find('/') == std::string::npos &&
                   shard.find('\\') == std::string::npos && shard != "." && shard != "..",
               index.string(), ": shard ", json_value_for_message(shard),
               " is not a plain file name inside the model directory");
}

}  // namespace

SafetensorsSet::SafetensorsSet(const fs::path& dir) {
  const fs::path single = dir / kSafetensorsFile;
  const fs::path index = dir / kSafetensorsIndexFile;
  const bool has_single = fs::exists(single), has_index = fs::exists(index);
  DIFFTX_CHECK(has_single || has_index, dir.string(), ": no ", kSafetensorsFile, " and no ", kSafetensorsIndexFile,
               " in the model directory");
  DIFFTX_CHECK(!(has_single && has_index), dir.string(), ": both ", kSafetensorsFile, " and ",
               kSafetensorsIndexFile, " are present; keep one so that it is clear which weights to load");
  if (has_single) {
    shards_.push_back(std::make_unique<SafetensorsReader>(single));
    for (const std::string& name : shards_[0]->names()) owner_[name] = shards_[0].get();
    return;
  }

  const nlohmann::json j = read_json_file(index);
  DIFFTX_CHECK(j.is_object() && j.contains("weight_map") && j.at("weight_map").is_object(), index.string(),
               ": expected an object with a 'weight_map' object");
  std::map<std::string, std::vector<std::string>> names_by_shard;
  for (const auto& [name, shard] : j.at("weight_map").items()) {
    DIFFTX_CHECK(shard.is_string(), index.string(), ": tensor '", name.substr(0, 200),
                 "' maps to a non-string shard");
    check_shard_name(shard.get<std::string>(), index);
    names_by_shard[shard.get<std::string>()].push_back(name);
  }
  DIFFTX_CHECK(!names_by_shard.empty(), index.string(), ": 'weight_map' lists no tensors");
  // Three passes, so that the message names the first thing wrong in the order a reader would
  // look: a missing shard, then a listed tensor a shard lacks, then a tensor nobody listed.
  for (const auto& [shard, names] : names_by_shard)
    DIFFTX_CHECK(fs::exists(dir / shard), index.string(), ": shard '", shard, "' (holding '", names.front(),
                 "') does not exist");
  for (const auto& [shard, names] : names_by_shard) {
    shards_.push_back(std::make_unique<SafetensorsReader>(dir / shard));
    for (const std::string& name : names) {
      DIFFTX_CHECK(shards_.back()->contains(name), (dir / shard).string(), ": tensor '", name,
                   "' is listed in ", kSafetensorsIndexFile, " for this shard but is not in it");
      owner_[name] = shards_.back().get();
    }
  }
  for (const auto& shard : shards_)
    for (const std::string& name : shard->names()) {
      const auto owner = owner_.find(name);
      DIFFTX_CHECK(owner != owner_.end() && owner->second == shard.get(), shard->path().string(), ": tensor '",
                   name.substr(0, 200), "' is not listed for this shard in ", kSafetensorsIndexFile,
                   owner != owner_.end() ? " (the index places it in another shard)" : "");
    }
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> out;
  for (const auto& [name, reader] : owner_) out.push_back(name);
  return out;
}

const SafetensorsReader& SafetensorsSet::reader_of(const std::string& name) const {
  const auto it = owner_.find(name);
  DIFFTX_CHECK(it != owner_.end(), "model weights: no tensor '", name, "'");
  return *it->second;
}

const SafetensorsTensorInfo& SafetensorsSet::info(const std::string& name) const {
  return reader_of(name).info(name);
}

const fs::path& SafetensorsSet::file_of(const std::string& name) const { return reader_of(name).path(); }

void SafetensorsSet::read_f32(const std::string& name, std::span<float> out,
                              const SafetensorsReader::OptionalShape& expected_shape) const {
  reader_of(name).read_f32(name, out, expected_shape);
}

std::vector<float> SafetensorsSet::read_f32(const std::string& name,
                                            const SafetensorsReader::OptionalShape& expected_shape) const {
  return reader_of(name).read_f32(name, expected_shape);
}

void SafetensorsSet::read_bytes(const std::string& name, std::span<unsigned char> out) const {
  reader_of(name).read_bytes(name, out);
}

const std::map<std::string, std::string>& SafetensorsSet::metadata_of(const std::string& name) const {
  return reader_of(name).metadata();
}

}  // namespace difftx::io
