// Tensor shapes as the file formats store them: a list of non-negative dimensions, C order.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace difftx::io {

// "[2, 3]" (and "[]" for a scalar), for error messages.
std::string format_shape(const std::vector<int64_t>& shape);

// Number of elements (1 for a scalar), or nullopt when a dimension is negative or the product
// exceeds `limit`.
std::optional<uint64_t> element_count(const std::vector<int64_t>& shape, uint64_t limit);

}  // namespace difftx::io
