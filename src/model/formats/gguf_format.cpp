#include "model/formats/gguf_format.h"

#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "chat/chat_template.h"
#include "core/error.h"
#include "data/byte_level.h"
#include "data/encodings.h"
#include "data/hf_tokenizer.h"
#include "io/gguf.h"
#include "io/json_file.h"
#include "kernels/ops.h"
#include "model/formats/hf_layout.h"
#include "model/storage_plan.h"

namespace difftx::model {
namespace {

// llama.cpp's split patterns (llama-vocab.cpp's pre-tokenizer types) as tokenizer.json and
// tiktoken spell them. cl100k_base's (difftx's trained vocabularies) differs from Llama 3's only
// in how a run of whitespace at the very end of a text splits; r50k_base's is GPT-2's with
// possessive quantifiers.
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// llama.cpp's token types (llama_token_type).
constexpr int32_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

// Whether an added token is a control token for llama.cpp: tokenizer.json marks it special, or it
// looks like one (<|...|>, DeepSeek's <｜...｜>, <pad>, <mask>, Gemma's <unused...>), as
// llama.cpp's converter decides. The others (Qwen's <tool_call>, <think>) are user-defined: text
// that llama.cpp matches in any prompt and prints, as transformers does.
bool control_token(const data::AddedToken* t, const std::string& content) {
  if (!t || t->special) return true;
  const auto wrapped = [&](std::string_view open, std::string_view close) {
    return content.size() >= open.size() + close.size() && content.starts_with(open) && content.ends_with(close);
  };
  return content == "<pad>" || content == "<mask>" || wrapped("<|", "|>") || wrapped("<\uFF5C", "\uFF5C>") ||
         wrapped("<unused", ">");
}

// GGUF tensor name of a difftx parameter (docs/SPEC.md §3 names).
std::string gguf_name(const ParamInfo& p) {
  static const std::pair<const char*, const char*> layer_names[] = {
      {"input_layernorm.weight", "attn_norm.weight"},   {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},     {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"}};
  if (p.name == "model.embed_tokens.weight") return "token_embd.weight";
  if (p.name == "model.norm.weight") return "output_norm.weight";
  if (p.name == "lm_head.weight") return "output.weight";
  const std::string prefix = "model.layers." + std::to_string(p.layer) + ".";
  for (const auto& [from, to] : layer_names)
    if (p.name == prefix + from) return "blk." + std::to_string(p.layer) + "." + to;
  fail("GGUF export: tensor '", p.name, "' has no llama.cpp name");
}

void add_vocabulary(io::GgufWriter& w, const data::Tokenizer& tok, int64_t vocab_size, const GgufChatMetadata& chat) {
  DIFFTX_CHECK(tok.vocab_size() <= vocab_size, "GGUF export: tokenizer ", tok.name(), " has ", tok.vocab_size(),
               " ids but the model's vocab_size is ", vocab_size);
  std::vector<std::string> tokens(vocab_size);
  std::vector<int32_t> types(vocab_size, kUnused);
  for (int64_t id = 0; id < vocab_size; ++id) tokens[id] = "[PAD" + std::to_string(id) + "]";
  const data::TokenTable& vocab = tok.ranks();
  for (int32_t r = 0; r < vocab.rank_end(); ++r)
    if (vocab.has_rank(r)) {
      tokens[r] = data::byte_level_encode(vocab.bytes_of(r));
      types[r] = kNormal;
    }
  for (const auto& [content, id] : tok.special_tokens())
    if (types[id] != kNormal) {
      tokens[id] = content;
      types[id] = control_token(tok.added().by_id(id), content) ? kControl : kUserDefined;
    }
  std::vector<std::string> merges;
  for (const auto& [left, right] : data::bpe_merge_pairs(tok))
    merges.push_back(data::byte_level_encode(vocab.bytes_of(left)) + " " + data::byte_level_encode(vocab.bytes_of(right)));
  w.add("tokenizer.ggml.model", std::string("gpt2"));
  w.add("tokenizer.ggml.pre", gguf_pre_tokenizer(tok));
  w.add("tokenizer.ggml.tokens", std::move(tokens));
  w.add("tokenizer.ggml.token_type", std::move(types));
  w.add("tokenizer.ggml.merges", std::move(merges));
  const auto& prefix = tok.parts().prefix;
  const std::optional<int32_t> bos = !prefix.empty() ? std::optional<int32_t>(prefix.front()) : chat.bos_id;
  if (bos) w.add("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(*bos));
  w.add("tokenizer.ggml.add_bos_token", !prefix.empty());
  w.add("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(chat.eos_id.value_or(tok.end_of_text())));
  w.add("tokenizer.ggml.add_eos_token", false);
  if (!chat.chat_template.empty()) w.add("tokenizer.chat_template", chat.chat_template);
  if (!chat.tool_use_template.empty()) w.add("tokenizer.chat_template.tool_use", chat.tool_use_template);
}

void add_hyperparameters(io::GgufWriter& w, const ModelConfig& c, kernels::WeightType dtype) {
  auto u32 = [](int64_t v, const char* what) {
    DIFFTX_CHECK(v >= 0 && v <= int64_t{UINT32_MAX}, "GGUF export: ", what, " ", v, " does not fit 32 bits");
    return static_cast<uint32_t>(v);
  };
  w.add("general.architecture", std::string("llama"));
  w.add("general.name", std::string("difftx baseline"));
  w.add("general.file_type", kernels::weight_type_info(dtype).gguf_file_type);
  w.add("general.quantization_version", uint32_t{2});
  w.add("llama.vocab_size", u32(c.vocab_size, "vocab_size"));
  w.add("llama.context_length", u32(c.max_position_embeddings, "max_position_embeddings"));
  w.add("llama.embedding_length", u32(c.hidden_size, "hidden_size"));
  w.add("llama.block_count", u32(c.num_hidden_layers, "num_hidden_layers"));
  w.add("llama.feed_forward_length", u32(c.intermediate_size, "intermediate_size"));
  w.add("llama.attention.head_count", u32(c.num_attention_heads, "num_attention_heads"));
  w.add("llama.attention.head_count_kv", u32(c.num_key_value_heads, "num_key_value_heads"));
  w.add("llama.attention.key_length", u32(c.head_dim, "head_dim"));
  w.add("llama.attention.value_length", u32(c.head_dim, "head_dim"));
  w.add("llama.attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  w.add("llama.rope.freq_base", static_cast<float>(c.rope_theta));
  w.add("llama.rope.dimension_count", u32(c.head_dim, "head_dim"));
  if (c.rope_scaling.type == kernels::RopeScalingType::linear) {
    w.add("llama.rope.scaling.type", std::string("linear"));
    w.add("llama.rope.scaling.factor", static_cast<float>(c.rope_scaling.factor));
  }
}

}  // namespace

std::string gguf_pre_tokenizer(const data::Tokenizer& tok) {
  const std::string& pattern = tok.pattern();
  if (pattern == kLlama3Pattern || pattern == data::default_training_pattern()) return "llama-bpe";
  if (pattern == kQwen2Pattern) return "qwen2";
  if (pattern == data::gpt2_pattern() || pattern == data::builtin_encoding("r50k_base")->pattern) return "gpt-2";
  fail("GGUF export: tokenizer ", tok.name(), " splits text with a pattern llama.cpp has no pre-tokenizer for (",
       pattern.substr(0, 200), "); known: Llama 3's, cl100k_base's, Qwen 2's and GPT-2's");
}

void require_gguf_architecture(const ModelConfig& c) {
  DIFFTX_CHECK(!c.hybrid, "GGUF export: llama.cpp has no phi4flash architecture (Phi-4-mini-flash's SambaY hybrid: ",
               "Mamba, sliding-window and cross-decoder attention, GMU layers); write it --to difftx or --to hf");
  DIFFTX_CHECK(c.attention == kernels::AttentionKind::baseline, "GGUF export: llama.cpp has no architecture for ",
               kernels::attention_kind_name(c.attention), " attention (DIFF V1/V2); only baseline models can be written as GGUF");
}

GgufChatMetadata gguf_chat_metadata(const std::filesystem::path& dir, const data::Tokenizer& tokenizer) {
  GgufChatMetadata m;
  // tokenizer_config.json's templates and special tokens, as the chat templates read them.
  chat::ChatTemplate read;
  if (auto t = chat::ChatTemplate::from_model_dir(dir.string())) {
    read = std::move(*t);
    m.chat_template = read.source;
    m.tool_use_template = read.tool_use_source;
  } else {
    read.take_special_tokens_of(dir.string());
  }
  const nlohmann::json config = io::read_json_object_if_present(dir / "config.json").value_or(nlohmann::json::object());
  const auto id_of = [&](const std::string& token, const char* id_key) -> std::optional<int32_t> {
    if (const data::AddedToken* added = token.empty() ? nullptr : tokenizer.added().by_content(token)) return added->id;
    if (const auto it = config.find(id_key); it != config.end()) {
      const nlohmann::json id = it->is_array() && !it->empty() ? it->front() : *it;
      if (id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < tokenizer.vocab_size())
        return static_cast<int32_t>(id.get<int64_t>());
    }
    return std::nullopt;
  };
  m.bos_id = id_of(read.bos_token, "bos_token_id");
  m.eos_id = id_of(read.eos_token, "eos_token_id");
  return m;
}

void save_gguf_model(const Model& model, const data::Tokenizer& tokenizer, kernels::WeightType dtype,
                     const std::filesystem::path& path, std::optional<kernels::WeightType> head,
                     const GgufChatMetadata& chat) {
  save_gguf_model(ModelWeights(model), tokenizer, dtype, path, head, chat);
}

void save_gguf_model(const WeightSource& source, const data::Tokenizer& tokenizer, kernels::WeightType dtype,
                     const std::filesystem::path& path, std::optional<kernels::WeightType> head,
                     const GgufChatMetadata& chat) {
  const ModelConfig& c = source.config();
  require_gguf_architecture(c);
  const ParameterTable table(c, storage_plan(c, dtype, head));
  io::GgufWriter w;
  add_hyperparameters(w, c, dtype);
  add_vocabulary(w, tokenizer, c.vocab_size, chat);
  for (const ParamInfo& p : table.params())
    w.add_tensor(gguf_name(p), p.shape, kernels::weight_type_info(p.type).ggml_type, static_cast<uint64_t>(p.bytes()));
  std::vector<float> factors;  // llama3 scaling: per pair, unscaled / scaled inverse frequency
  if (c.rope_scaling.type == kernels::RopeScalingType::llama3) {
    for (int64_t i = 0; i < c.head_dim / 2; ++i)
      factors.push_back(static_cast<float>(backends::cpu::kernels().rope_inverse_frequency(i, c.head_dim, c.rope_theta, {}) /
                                           backends::cpu::kernels().rope_inverse_frequency(i, c.head_dim, c.rope_theta, c.rope_scaling)));
    w.add_tensor("rope_freqs.weight", {c.head_dim / 2}, 0,
                 {reinterpret_cast<const uint8_t*>(factors.data()), factors.size() * sizeof(float)});
  }

  // One tensor at a time: widened, converted to its type in the storage plan, and (q and k)
  // its rows reordered: llama.cpp's llama rotates adjacent pairs (interleaved RoPE), so
  // rotate-half rows are reordered within every head (docs/FORMATS.md "GGUF export").
  std::vector<float> widened;
  std::vector<uint8_t> converted, reordered;
  w.write(path, [&](size_t index) {
    const ParamInfo& p = table.params().at(index);
    widened.resize(p.numel);
    source.read(p.name, widened);
    const int64_t bytes = p.bytes();
    const uint8_t* data = reinterpret_cast<const uint8_t*>(widened.data());
    if (p.packed()) {
      converted.resize(bytes);
      convert_tensor(p, widened, converted.data());
      data = converted.data();
    }
    const bool rotated = p.name.ends_with("q_proj.weight") || p.name.ends_with("k_proj.weight");
    if (rotated && c.rope_style == kernels::RopeStyle::half) {
      reordered.resize(bytes);
      gather_rows(data, p.shape[0], half_to_interleaved_rows(p.shape[0], c.head_dim), bytes / p.shape[0],
                  reordered.data());
      data = reordered.data();
    }
    return std::span<const uint8_t>(data, static_cast<size_t>(bytes));
  });
}

}  // namespace difftx::model
