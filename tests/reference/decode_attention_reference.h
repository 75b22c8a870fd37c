// The reference twin of single-query attention over a KV cache (kernels/attention/decode_attention.h).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/attention/decode_attention.h"

namespace difftx {

// Every map's scores materialised, softmax and sums in double,
// from the same stored keys and values (widened exactly).
std::vector<double> decode_attention_reference(const kernels::DecodeAttentionDims& dims, int64_t length, const float* q,
                                               const void* keys, const void* values, const float* lambda);

}  // namespace difftx
