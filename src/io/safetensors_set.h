// The weights of a model directory, as Hugging Face lays them out (docs/FORMATS.md "Sharded
// safetensors"): either one `model.safetensors`, or shards listed by
// `model.safetensors.index.json` ({"metadata": {...}, "weight_map": {tensor name: shard file}}).
//
// Opening validates the whole set before any tensor is read: every shard is a plain file name
// inside the directory, every name the index lists is in the shard it names, and no shard holds
// a tensor the index does not list there (so no tensor is in two shards). Errors name the file
// and the tensor.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace difftx::io {

class SafetensorsSet {
 public:
  explicit SafetensorsSet(const std::filesystem::path& dir);

  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return owner_.count(name) != 0; }
  const SafetensorsTensorInfo& info(const std::string& name) const;
  // The file that holds `name`, for messages.
  const std::filesystem::path& file_of(const std::string& name) const;
  void read_f32(const std::string& name, std::span<float> out,
                const SafetensorsReader::OptionalShape& expected_shape = std::nullopt) const;
  std::vector<float> read_f32(const std::string& name,
                              const SafetensorsReader::OptionalShape& expected_shape = std::nullopt) const;
  void read_bytes(const std::string& name, std::span<unsigned char> out) const;
  // SafetensorsReader::check_f32 of the shard holding `name`.
  const SafetensorsTensorInfo& check_f32(const std::string& name,
                                         const SafetensorsReader::OptionalShape& expected_shape) const {
    return reader_of(name).check_f32(name, expected_shape);
  }
  // The "__metadata__" of the file that holds `name`.
  const std::map<std::string, std::string>& metadata_of(const std::string& name) const;

 private:
  const SafetensorsReader& reader_of(const std::string& name) const;
  std::vector<std::unique_ptr<SafetensorsReader>> shards_;
  std::map<std::string, const SafetensorsReader*> owner_;
};

inline constexpr const char* kSafetensorsFile = "model.safetensors";
inline constexpr const char* kSafetensorsIndexFile = "model.safetensors.index.json";

}  // namespace difftx::io
