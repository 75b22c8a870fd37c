#include "backends/vulkan/spirv_bindings.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

// SPIR-V opcodes, execution modes, storage classes and decorations (the SPIR-V specification, 3).
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kOpExecutionMode = 16, kOpTypeBool = 20, kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypeVector = 23,
                   kOpTypeMatrix = 24, kOpTypeArray = 28, kOpTypeRuntimeArray = 29, kOpTypeStruct = 30,
                   kOpTypePointer = 32, kOpConstant = 43, kOpConstantComposite = 44, kOpSpecConstant = 50,
                   kOpSpecConstantComposite = 51, kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72,
                   kOpExecutionModeId = 331;
constexpr uint32_t kLocalSize = 17, kLocalSizeId = 38, kWorkgroup = 4;
constexpr uint32_t kBuiltIn = 11, kNonWritable = 24, kBinding = 33, kDescriptorSet = 34, kWorkgroupSize = 25;

// fn(opcode, words, count) for each instruction of the module (words[0] is its opcode's word).
template <typename Fn>
void for_each_instruction(std::span<const uint32_t> words, Fn fn) {
  DIFFTX_CHECK(words.size() >= 5 && words[0] == kMagic, "vulkan: a shader's code is not SPIR-V");
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    DIFFTX_CHECK(count >= 1 && at + count <= words.size(), "vulkan: a shader's SPIR-V is cut short");
    fn(words[at] & 0xffff, &words[at], count);
    at += count;
  }
}

}  // namespace

std::vector<bool> writable_bindings(std::span<const uint32_t> words, size_t bindings) {
  std::unordered_map<uint32_t, uint32_t> binding, set, pointee, element, members;
  std::unordered_map<uint32_t, uint32_t> read_only_members;  // struct -> members decorated NonWritable
  std::unordered_set<uint32_t> read_only;                    // ids decorated NonWritable
  std::vector<std::pair<uint32_t, uint32_t>> variables;      // (id, pointer type)
  for_each_instruction(words, [&](uint32_t op, const uint32_t* w, uint32_t count) {
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
  });
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

WorkgroupNeeds workgroup_needs(std::span<const uint32_t> words) {
  WorkgroupNeeds needs;
  std::unordered_map<uint32_t, uint32_t> constants;                // id -> value (its low word)
  std::unordered_map<uint32_t, std::vector<uint32_t>> composites;  // id -> constituents
  std::unordered_map<uint32_t, std::vector<uint32_t>> types;       // id -> opcode, operands after the id
  std::vector<uint32_t> shared;                                    // shared variables' pointer types
  std::vector<uint32_t> size_ids;                                  // LocalSizeId's constants
  uint32_t builtin_size = 0;                                       // the WorkgroupSize constant
  for_each_instruction(words, [&](uint32_t op, const uint32_t* w, uint32_t count) {
    if (op == kOpExecutionMode && count >= 6 && w[2] == kLocalSize) {
      std::copy(w + 3, w + 6, needs.size);
    } else if (op == kOpExecutionModeId && count >= 6 && w[2] == kLocalSizeId) {
      size_ids.assign(w + 3, w + 6);
    } else if (op == kOpDecorate && count >= 4 && w[2] == kBuiltIn && w[3] == kWorkgroupSize) {
      builtin_size = w[1];
    } else if ((op == kOpConstant || op == kOpSpecConstant) && count >= 4) {
      constants[w[2]] = w[3];
    } else if ((op == kOpConstantComposite || op == kOpSpecConstantComposite) && count >= 3) {
      composites[w[2]].assign(w + 3, w + count);
    } else if ((op >= kOpTypeBool && op <= kOpTypeMatrix) || op == kOpTypeArray || op == kOpTypeStruct ||
               op == kOpTypePointer) {
      std::vector<uint32_t>& t = types[w[1]];
      t.push_back(op);
      t.insert(t.end(), w + 2, w + count);
    } else if (op == kOpVariable && count >= 4 && w[3] == kWorkgroup) {
      shared.push_back(w[1]);
    }
  });
  // The WorkgroupSize constant takes precedence over LocalSize (SPIR-V's BuiltIn WorkgroupSize).
  if (builtin_size && composites.count(builtin_size)) size_ids = composites[builtin_size];
  for (size_t i = 0; i < 3 && size_ids.size() == 3; ++i)
    if (constants.count(size_ids[i])) needs.size[i] = constants[size_ids[i]];
  const std::function<int64_t(uint32_t)> bytes = [&](uint32_t id) -> int64_t {
    const auto it = types.find(id);
    if (it == types.end()) return 0;  // a type no shared variable of ours has: not counted
    const std::vector<uint32_t>& t = it->second;
    switch (t[0]) {
      case kOpTypeBool: return 4;
      case kOpTypeInt:
      case kOpTypeFloat: return t.size() > 1 ? t[1] / 8 : 0;
      case kOpTypeVector:
      case kOpTypeMatrix: return t.size() > 2 ? bytes(t[1]) * t[2] : 0;
      case kOpTypeArray: return t.size() > 2 && constants.count(t[2]) ? bytes(t[1]) * constants[t[2]] : 0;
      case kOpTypePointer: return t.size() > 2 ? bytes(t[2]) : 0;
      case kOpTypeStruct: {
        int64_t sum = 0;
        for (size_t m = 1; m < t.size(); ++m) sum += bytes(t[m]);
        return sum;
      }
      default: return 0;
    }
  };
  for (uint32_t pointer : shared) needs.shared_bytes += bytes(pointer);
  return needs;
}

}  // namespace difftx::backends::vulkan
