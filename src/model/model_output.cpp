#include "model/model_output.h"

#include <memory>
#include <system_error>

#include "core/error.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "io/json_file.h"
#include "model/formats/difftx_format.h"
#include "model/formats/gguf_format.h"
#include "model/formats/hf_format.h"
#include "model/formats/stored_model.h"
#include "model/model_io.h"
#include "model/storage_plan.h"

namespace difftx::model {
namespace fs = std::filesystem;
namespace {

kernels::WeightType weight_type_option(const std::string& option, const std::string& value) {
  try {
    return kernels::parse_weight_type(value);
  } catch (const Error&) {
    fail(option, ": '", value.substr(0, 64), "' is not a storage type (f32, bf16, f16, q8_0, q4_0, q4_k)");
  }
}

// Files that travel with the weights unchanged.
constexpr const char* kSidecarFiles[] = {"tokenizer.tiktoken",     "tokenizer.tiktoken.json", "tokenizer.json",
                                         "vocab.json",             "merges.txt",              "added_tokens.json",
                                         "tokenizer_config.json",  "special_tokens_map.json", "generation_config.json",
                                         "chat_template.jinja"};

// The tokenizer goes along: as it is, except that a Hugging Face directory gets tokenizer.json
// (and tokenizer_config.json) in place of difftx's tiktoken files, which transformers cannot read.
void copy_tokenizer(const fs::path& in, const ModelOutput& out) {
  const bool tiktoken = fs::is_regular_file(in / data::kTokenizerRanksFile);
  if (tiktoken && out.format == "hf") {
    data::write_hf_tokenizer(data::load_tokenizer(in.string()), out.dir);
    return;
  }
  for (const char* name : kSidecarFiles)
    if (fs::is_regular_file(in / name)) fs::copy_file(in / name, out.dir / name);
}

// Removes --out when this conversion created it and failed before anything was written into it
// (a weight found non-finite while streaming), so that nothing looks like a model.
class OutputDirGuard {
 public:
  explicit OutputDirGuard(fs::path dir) : dir_(std::move(dir)), created_(!fs::exists(dir_)) {}
  ~OutputDirGuard() {
    std::error_code ignored;
    if (created_ && !done_ && fs::is_directory(dir_, ignored) && fs::is_empty(dir_, ignored)) fs::remove(dir_, ignored);
  }
  void done() { done_ = true; }

 private:
  fs::path dir_;
  bool created_, done_ = false;
};

// The weights of `source`, with `interrupt` called before every tensor is read.
class InterruptibleSource final : public WeightSource {
 public:
  InterruptibleSource(const WeightSource& source, const Interrupt& interrupt)
      : source_(source), interrupt_(interrupt) {}
  const ModelConfig& config() const override { return source_.config(); }
  void read(const std::string& name, std::span<float> out) const override {
    if (interrupt_) interrupt_();
    source_.read(name, out);
  }

 private:
  const WeightSource& source_;
  const Interrupt& interrupt_;
};

}  // namespace

void carry_token_ids(const nlohmann::json& source, const fs::path& out) {
  nlohmann::json written = io::read_json_file(out / "config.json");
  bool carried = false;
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"})
    if (source.contains(key) && !source.at(key).is_null()) {
      written[key] = source.at(key);
      carried = true;
    }
  if (carried) io::write_json_file(out / "config.json", written);
}

ModelOutput model_output(const fs::path& dir, const std::string& format, const std::string& dtype,
                         const std::optional<std::string>& head_dtype, OptionSpelling spelling) {
  const auto name = [&](std::string_view field) { return option_name(field, spelling); };
  ModelOutput o;
  o.dir = dir;
  o.format = format;
  o.spelling = spelling;
  DIFFTX_CHECK(o.format == "difftx" || o.format == "hf" || o.format == "gguf", name("to"), ": '",
               o.format.substr(0, 64), "' is not a format (difftx, hf, gguf)");
  o.dtype = weight_type_option(name("dtype"), dtype);
  if (head_dtype) o.head_dtype = weight_type_option(name("head_dtype"), *head_dtype);
  DIFFTX_CHECK(!o.head_dtype || o.format != "hf", name("head_dtype"), ": a Hugging Face directory holds every ",
               "matrix in one type; difftx directories and GGUF files hold the embedding and LM head in their own");
  if (o.dtype == kernels::WeightType::bf16) o.stored = io::StoredFloat::bf16;
  if (o.dtype == kernels::WeightType::f16) o.stored = io::StoredFloat::f16;
  DIFFTX_CHECK(o.format != "hf" || !kernels::weight_type_info(o.dtype).is_block(), name("dtype"), " ",
               dtype.substr(0, 64), ": a Hugging Face directory holds f32, bf16 or f16 weights; write block types ",
               "with ", name("to"), " difftx or gguf");
  DIFFTX_CHECK(!o.dir.empty(), name("out"), ": an empty path");
  DIFFTX_CHECK(!fs::exists(o.dir) || (fs::is_directory(o.dir) && fs::is_empty(o.dir)), name("out"), " ",
               o.dir.string(), ": exists and is not an empty directory (a model is never overwritten)");
  return o;
}

void write_model(const WeightSource& source, const ModelOutput& out, const data::Tokenizer* tokenizer,
                 const GgufChatMetadata& chat) {
  if (out.format == "gguf") {
    const std::string to = option_name("to", out.spelling);
    DIFFTX_CHECK(tokenizer, to, " gguf: a GGUF file carries the vocabulary, and there is no tokenizer to take it ",
                 "from (write the model ", to, " difftx, put tokenizer.json beside it, then convert ", to, " gguf)");
    fs::create_directories(out.dir);
    save_gguf_model(source, *tokenizer, out.dtype, out.dir / kGgufFile, out.head_dtype, chat);
  } else if (out.format == "hf") save_hf_model(source, out.dir, out.stored);
  else if (source.config().hybrid)  // the vectors stay F32 (A_log, D, ...: Phi4Flash keeps some F32 in any dtype)
    save_difftx_model(source, storage_plan(source.config(), out.dtype, out.head_dtype), out.dir, io::StoredFloat::f32);
  else if (!kernels::weight_type_info(out.dtype).is_block() && !out.head_dtype)
    save_difftx_model(source, {}, out.dir, out.stored);
  else save_difftx_model(source, storage_plan(source.config(), out.dtype, out.head_dtype), out.dir, out.stored);
}

// The weights stream: config.json and every safetensors header are checked first, then each
// tensor is read, widened, converted and written before the next (docs/FORMATS.md "Streaming
// conversion"), so the memory used is a few tensors' whatever the model's size.
ModelConfig convert_model(const fs::path& in, const ModelOutput& out, const Interrupt& interrupt) {
  const std::unique_ptr<StoredModel> model = open_model_dir(in);
  const InterruptibleSource weights(*model, interrupt);
  OutputDirGuard guard(out.dir);
  if (out.format == "gguf") {
    require_gguf_architecture(model->config());
    DIFFTX_CHECK(data::has_tokenizer_files(in), in.string(), ": --to gguf needs the model's tokenizer (",
                 data::kTokenizerFilesNamed, ") in the directory: GGUF carries the vocabulary");
    const data::Tokenizer tokenizer = data::load_tokenizer(in.string());
    write_model(weights, out, &tokenizer, gguf_chat_metadata(in, tokenizer));
  } else {
    write_model(weights, out);
    copy_tokenizer(in, out);
    carry_token_ids(io::read_json_file(in / "config.json"), out.dir);
  }
  guard.done();
  return model->config();
}

}  // namespace difftx::model
