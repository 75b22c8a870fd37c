#include "model/weight_source.h"

#include <algorithm>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/quant/quantize.h"

namespace difftx::model {

void ModelWeights::read(const std::string& name, std::span<float> out) const {
  const ParamInfo* p = model_.table.find(name);
  DIFFTX_CHECK(p != nullptr, "internal: the model has no tensor '", name, "'");
  DIFFTX_CHECK(static_cast<int64_t>(out.size()) == p->numel, "internal: tensor '", name, "' has ", p->numel,
               " elements, the destination ", out.size());
  if (!p->packed()) std::copy_n(model_.host_weights() + p->offset, p->numel, out.data());
  else backends::cpu::kernels().dequantize_rows(p->type, model_.host_packed() + p->byte_offset, out.data(), p->shape[0], p->shape[1]);
}

}  // namespace difftx::model
