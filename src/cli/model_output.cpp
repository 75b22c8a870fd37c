#include "cli/model_output.h"

#include "core/error.h"
#include "model/formats/difftx_format.h"
#include "model/formats/hf_format.h"

namespace difftx::cli {
namespace fs = std::filesystem;

ModelOutput model_output_options(Args& args) {
  ModelOutput o;
  o.dir = args.require("out");
  o.format = args.get("to", "difftx");
  const std::string dtype = args.get("dtype", "f32");
  DIFFTX_CHECK(o.format == "difftx" || o.format == "hf", "--to: '", o.format.substr(0, 64),
               "' is not a format (difftx, hf)");
  if (dtype == "f32") o.stored = StoredFloat::f32;
  else if (dtype == "bf16") o.stored = StoredFloat::bf16;
  else if (dtype == "f16") o.stored = StoredFloat::f16;
  else fail("--dtype: '", dtype.substr(0, 64), "' is not a storage type (f32, bf16, f16)");
  DIFFTX_CHECK(!o.dir.empty(), "--out: an empty path");
  DIFFTX_CHECK(!fs::exists(o.dir) || (fs::is_directory(o.dir) && fs::is_empty(o.dir)), "--out ", o.dir.string(),
               ": exists and is not an empty directory (a model is never overwritten)");
  return o;
}

void write_model(const Model& model, const ModelOutput& out) {
  if (out.format == "hf") save_hf_model(model, out.dir, out.stored);
  else save_difftx_model(model, out.dir, out.stored);
}

}  // namespace difftx::cli
