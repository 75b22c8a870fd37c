#include "cli/model_output.h"

#include "core/error.h"
#include "model/formats/difftx_format.h"
#include "model/formats/hf_format.h"
#include "model/storage_plan.h"

namespace difftx::cli {
namespace fs = std::filesystem;

ModelOutput model_output_options(Args& args) {
  ModelOutput o;
  o.dir = args.require("out");
  o.format = args.get("to", "difftx");
  const std::string dtype = args.get("dtype", "f32");
  DIFFTX_CHECK(o.format == "difftx" || o.format == "hf", "--to: '", o.format.substr(0, 64),
               "' is not a format (difftx, hf)");
  try {
    o.dtype = parse_weight_type(dtype);
  } catch (const Error&) {
    fail("--dtype: '", dtype.substr(0, 64), "' is not a storage type (f32, bf16, f16, q8_0, q4_0, q4_k)");
  }
  if (o.dtype == WeightType::bf16) o.stored = StoredFloat::bf16;
  if (o.dtype == WeightType::f16) o.stored = StoredFloat::f16;
  DIFFTX_CHECK(o.format == "difftx" || weight_type_info(o.dtype).block_weights == 1, "--dtype ", dtype,
               ": a Hugging Face directory holds f32, bf16 or f16 weights; write block types with --to difftx");
  DIFFTX_CHECK(!o.dir.empty(), "--out: an empty path");
  DIFFTX_CHECK(!fs::exists(o.dir) || (fs::is_directory(o.dir) && fs::is_empty(o.dir)), "--out ", o.dir.string(),
               ": exists and is not an empty directory (a model is never overwritten)");
  return o;
}

void write_model(const Model& model, const ModelOutput& out) {
  if (out.format == "hf") save_hf_model(model, out.dir, out.stored);
  else if (weight_type_info(out.dtype).block_weights == 1) save_difftx_model(model, out.dir, out.stored);
  else save_difftx_model(convert_matrices(model, storage_plan(model.config, out.dtype)), out.dir, out.stored);
}

}  // namespace difftx::cli
