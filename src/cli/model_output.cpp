#include "cli/model_output.h"

#include "core/error.h"
#include "model/formats/difftx_format.h"
#include "model/formats/gguf_format.h"
#include "model/formats/hf_format.h"
#include "model/storage_plan.h"

namespace difftx::cli {
namespace fs = std::filesystem;
namespace {

WeightType weight_type_option(const char* option, const std::string& value) {
  try {
    return parse_weight_type(value);
  } catch (const Error&) {
    fail("--", option, ": '", value.substr(0, 64), "' is not a storage type (f32, bf16, f16, q8_0, q4_0, q4_k)");
  }
}

}  // namespace

ModelOutput model_output_options(Args& args) {
  ModelOutput o;
  o.dir = args.require("out");
  o.format = args.get("to", "difftx");
  const std::string dtype = args.get("dtype", "f32");
  DIFFTX_CHECK(o.format == "difftx" || o.format == "hf" || o.format == "gguf", "--to: '", o.format.substr(0, 64),
               "' is not a format (difftx, hf, gguf)");
  o.dtype = weight_type_option("dtype", dtype);
  if (const auto head = args.get("head-dtype")) o.head_dtype = weight_type_option("head-dtype", *head);
  DIFFTX_CHECK(!o.head_dtype || o.format == "difftx", "--head-dtype: only difftx model directories (--to difftx) "
               "hold the embedding and LM head in their own type");
  if (o.dtype == WeightType::bf16) o.stored = StoredFloat::bf16;
  if (o.dtype == WeightType::f16) o.stored = StoredFloat::f16;
  DIFFTX_CHECK(o.format != "hf" || weight_type_info(o.dtype).block_weights == 1, "--dtype ", dtype,
               ": a Hugging Face directory holds f32, bf16 or f16 weights; write block types with --to difftx or gguf");
  DIFFTX_CHECK(!o.dir.empty(), "--out: an empty path");
  DIFFTX_CHECK(!fs::exists(o.dir) || (fs::is_directory(o.dir) && fs::is_empty(o.dir)), "--out ", o.dir.string(),
               ": exists and is not an empty directory (a model is never overwritten)");
  return o;
}

void write_model(const WeightSource& source, const ModelOutput& out, const data::Tokenizer* tokenizer) {
  if (out.format == "gguf") {
    DIFFTX_CHECK(tokenizer, "--to gguf: a GGUF file carries the vocabulary, and there is no tokenizer to take it "
                 "from (write the model --to difftx, put tokenizer.json beside it, then convert --to gguf)");
    fs::create_directories(out.dir);
    save_gguf_model(source, *tokenizer, out.dtype, out.dir / kGgufFile);
  } else if (out.format == "hf") save_hf_model(source, out.dir, out.stored);
  else if (weight_type_info(out.dtype).block_weights == 1 && !out.head_dtype) save_difftx_model(source, {}, out.dir, out.stored);
  else save_difftx_model(source, storage_plan(source.config(), out.dtype, out.head_dtype), out.dir, out.stored);
}

}  // namespace difftx::cli
