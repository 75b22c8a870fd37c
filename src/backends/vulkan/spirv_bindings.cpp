#include "backends/vulkan/spirv_bindings.h"

#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

// SPIR-V opcodes and decorations (the SPIR-V specification, 3.32 and 3.20).
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kOpTypeArray = 28, kOpTypeRuntimeArray = 29, kOpTypeStruct = 30, kOpTypePointer = 32,
                   kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72;
constexpr uint32_t kNonWritable = 24, kBinding = 33, kDescriptorSet = 34;

}  // namespace

std::vector<bool> writable_bindings(std::span<const uint32_t> words, size_t bindings) {
  DIFFTX_CHECK(words.size() >= 5 && words[0] == kMagic, "vulkan: a shader's code is not SPIR-V");
  std::unordered_map<uint32_t, uint32_t> binding, set, pointee, element, members;
  std::unordered_map<uint32_t, uint32_t> read_only_members;  // struct -> members decorated NonWritable
  std::unordered_set<uint32_t> read_only;                    // ids decorated NonWritable
  std::vector<std::pair<uint32_t, uint32_t>> variables;      // (id, pointer type)
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16, op = words[at] & 0xffff;
    DIFFTX_CHECK(count >= 1 && at + count <= words.size(), "vulkan: a shader's SPIR-V is cut short");
    const uint32_t* w = &words[at];
    if (op == kOpDecorate && count >= 3) {
      if (w[2] == kNonWritable) read_only.insert(w[1]);
      if (w[2] == kBinding && count >= 4) binding[w[1]] = w[3];
      if (w[2] == kDescriptorSet && count >= 4) set[w[1]] = w[3];
    } else if (op == kOpMemberDecorate && count >= 4 && w[3] == kNonWritable) {
      ++read_only_members[w[1]];
    } else if (op == kOpTypeStruct) {
      members[w[1]] = count - 2;
    } else if (op == kOpTypePointer && count >= 4) {
      pointee[w[1]] = w[3];
    } else if ((op == kOpTypeArray || op == kOpTypeRuntimeArray) && count >= 3) {
      element[w[1]] = w[2];
    } else if (op == kOpVariable && count >= 3) {
      variables.emplace_back(w[2], w[1]);
    }
    at += count;
  }
  std::vector<bool> writes(bindings, true);
  std::vector<bool> seen(bindings, false);
  for (const auto& [id, pointer] : variables) {
    const auto b = binding.find(id);
    if (b == binding.end() || b->second >= bindings || (set.count(id) && set[id] != 0)) continue;
    uint32_t type = pointee.count(pointer) ? pointee[pointer] : 0;
    while (element.count(type)) type = element[type];  // an array of buffers: its block
    const bool read = read_only.count(id) || read_only.count(type) ||
                      (members.count(type) && members[type] > 0 && read_only_members[type] == members[type]);
    writes[b->second] = seen[b->second] ? writes[b->second] || !read : !read;  // aliases: writable if any is
    seen[b->second] = true;
  }
  return writes;
}

}  // namespace difftx::backends::vulkan
