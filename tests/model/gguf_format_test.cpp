// GGUF export (model/formats/gguf_format.h) read back by a parser written here from the format
// (docs/FORMATS.md "GGUF export"): the llama metadata, the vocabulary of the Llama 3 tokenizer,
// every tensor's name, shape and GGML type, the q/k rows in llama.cpp's interleaved RoPE order
// and the llama3 frequency factors. That llama.cpp itself runs the file the same way difftx runs
// the model is tests/scripts/llama_cpp_peer.sh (needs node-llama-cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "data/data_fixtures.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "kernels/ops.h"
#include "kernels/quant/quantize.h"
#include "model/formats/gguf_format.h"
#include "model/formats/hf_layout.h"
#include "model/storage_plan.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::model {

using kernels::WeightType;

namespace {

using nlohmann::json;

struct GgufTensor {
  std::vector<int64_t> dims;  // innermost first
  uint32_t type;
  uint64_t offset;
};

// A GGUF v3 file: metadata as JSON values, tensor infos, and the data section.
struct GgufFile {
  std::map<std::string, json> metadata;
  std::map<std::string, GgufTensor> tensors;
  std::string bytes;
  uint64_t data_start = 0;

  explicit GgufFile(const std::filesystem::path& path) : bytes(io::read_whole_file(path)) {
    EXPECT_EQ(bytes.substr(0, 4), "GGUF");
    EXPECT_EQ(u32(), 3u);
    const uint64_t tensor_count = u64(), metadata_count = u64();
    for (uint64_t i = 0; i < metadata_count; ++i) {
      const std::string key = str();
      metadata[key] = value(u32());
    }
    for (uint64_t i = 0; i < tensor_count; ++i) {
      const std::string name = str();
      GgufTensor t;
      t.dims.resize(u32());
      for (auto& d : t.dims) d = static_cast<int64_t>(u64());
      t.type = u32();
      t.offset = u64();
      tensors[name] = t;
    }
    data_start = (pos_ + 31) / 32 * 32;
  }
  const unsigned char* data(const std::string& name) const {
    return reinterpret_cast<const unsigned char*>(bytes.data() + data_start + tensors.at(name).offset);
  }

 private:
  template <typename T>
  T read() {
    T v;
    std::memcpy(&v, bytes.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  uint32_t u32() { return read<uint32_t>(); }
  uint64_t u64() { return read<uint64_t>(); }
  std::string str() {
    const uint64_t n = u64();
    std::string s = bytes.substr(pos_, n);
    pos_ += n;
    return s;
  }
  json value(uint32_t type) {
    switch (type) {
      case 4: return u32();
      case 5: return read<int32_t>();
      case 6: return read<float>();
      case 7: return read<uint8_t>() != 0;
      case 8: return str();
      case 10: return u64();
      case 9: {
        const uint32_t element = u32();
        const uint64_t n = u64();
        json a = json::array();
        for (uint64_t i = 0; i < n; ++i) a.push_back(value(element));
        return a;
      }
    }
    ADD_FAILURE() << "GGUF value type " << type << " not written by difftx";
    return nullptr;
  }
  size_t pos_ = 4;
};

ModelConfig llama_like() {
  ModelConfig c;
  c.attention = kernels::AttentionKind::baseline;
  c.vocab_size = 128256;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.num_key_value_heads = 1;
  c.head_dim = 16;
  c.intermediate_size = 64;
  c.max_position_embeddings = 256;
  c.tie_word_embeddings = false;
  c.rope_style = kernels::RopeStyle::half;
  c.rope_theta = 500000.0;
  c.rope_scaling = {kernels::RopeScalingType::llama3, 8.0, 1.0, 4.0, 64.0};
  c.validate();
  return c;
}

TEST(GgufExport, LlamaFileHoldsTheModelItsVocabularyAndInterleavedRows) {
  DIFFTX_REQUIRE_DATA("hf/llama3/tokenizer.json");
  const data::Tokenizer tok = data::load_tokenizer((data::data_root() / "hf/llama3").string());
  const ModelConfig c = llama_like();
  const Model model = testing::random_model(c, 9);
  testing::TempDir dir;
  save_gguf_model(model, tok, WeightType::q8_0, dir / "m.gguf");
  const GgufFile f(dir / "m.gguf");

  EXPECT_EQ(f.metadata.at("general.architecture"), "llama");
  EXPECT_EQ(f.metadata.at("general.file_type"), 7);  // MOSTLY_Q8_0
  EXPECT_EQ(f.metadata.at("llama.block_count"), 2);
  EXPECT_EQ(f.metadata.at("llama.embedding_length"), 32);
  EXPECT_EQ(f.metadata.at("llama.feed_forward_length"), 64);
  EXPECT_EQ(f.metadata.at("llama.attention.head_count"), 2);
  EXPECT_EQ(f.metadata.at("llama.attention.head_count_kv"), 1);
  EXPECT_EQ(f.metadata.at("llama.rope.dimension_count"), 16);
  EXPECT_FLOAT_EQ(f.metadata.at("llama.rope.freq_base").get<float>(), 500000.0f);
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.pre"), "llama-bpe");
  const json& tokens = f.metadata.at("tokenizer.ggml.tokens");
  const json& types = f.metadata.at("tokenizer.ggml.token_type");
  ASSERT_EQ(tokens.size(), 128256u);
  ASSERT_EQ(types.size(), 128256u);
  EXPECT_EQ(tokens[128000], "<|begin_of_text|>");
  EXPECT_EQ(types[128000], 3);  // control
  EXPECT_EQ(tokens[220], "\xC4\xA0");  // the space byte, byte-level: U+0120
  EXPECT_EQ(types[220], 1);
  EXPECT_EQ(tokens[9906], "Hello");
  const json tokenizer_json = json::parse(io::read_whole_file(data::data_root() / "hf/llama3/tokenizer.json"));
  const json& merges = f.metadata.at("tokenizer.ggml.merges");
  ASSERT_EQ(merges.size(), tokenizer_json["model"]["merges"].size());
  const json& first = tokenizer_json["model"]["merges"][0];  // "a b" or ["a", "b"] by version
  EXPECT_EQ(merges[0], first.is_string() ? first.get<std::string>() : first[0].get<std::string>() + " " + first[1].get<std::string>());
  // These files' post-processor adds no BOS (transformers.js's Llama 3 files), so neither does llama.cpp.
  ASSERT_TRUE(tok.parts().prefix.empty());
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.add_bos_token"), false);
  EXPECT_EQ(f.metadata.count("tokenizer.ggml.bos_token_id"), 0u);
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.eos_token_id"), tok.end_of_text());

  // Tensors: names, shapes innermost first, the storage plan's types (Q8_0 = 8, F32 = 0).
  EXPECT_EQ(f.tensors.size(), 2u + 9u * 2 + 1u + 1u);  // embedding, final norm, layers, output, rope_freqs
  EXPECT_EQ(f.tensors.at("token_embd.weight").dims, (std::vector<int64_t>{32, 128256}));
  EXPECT_EQ(f.tensors.at("token_embd.weight").type, 8u);
  EXPECT_EQ(f.tensors.at("output.weight").type, 8u);
  EXPECT_EQ(f.tensors.at("blk.1.ffn_down.weight").dims, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(f.tensors.at("blk.0.attn_norm.weight").type, 0u);
  EXPECT_EQ(f.tensors.at("blk.0.attn_k.weight").dims, (std::vector<int64_t>{32, 16}));

  // q and k: GGUF row r holds the model's row half_to_interleaved[r], as difftx quantizes it.
  for (const char* proj : {"q_proj", "k_proj"}) {
    const ParamInfo& p = *model.table.find(std::string("model.layers.1.self_attn.") + proj + ".weight");
    const int64_t rows = p.shape[0], cols = p.shape[1];
    std::vector<unsigned char> packed(kernels::weight_matrix_bytes(WeightType::q8_0, rows, cols));
    backends::cpu::kernels().quantize_rows(WeightType::q8_0, model.host_weights() + p.offset, packed.data(), rows, cols);
    std::vector<float> want(rows * cols), got(rows * cols);
    backends::cpu::kernels().dequantize_rows(WeightType::q8_0, packed.data(), want.data(), rows, cols);
    backends::cpu::kernels().dequantize_rows(WeightType::q8_0, f.data(std::string("blk.1.attn_") + proj[0] + ".weight"), got.data(), rows, cols);
    const RowMap map = half_to_interleaved_rows(rows, c.head_dim);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t x = 0; x < cols; ++x)
        ASSERT_EQ(got[r * cols + x], want[map[r] * cols + x]) << proj << " row " << r;
    EXPECT_EQ(map[2], 1);  // row 2 of the first head <- rotate-half row 1
    EXPECT_EQ(map[3], 9);  // row 3 <- row d/2 + 1
  }
  // llama3 scaling: per pair, the unscaled over the scaled inverse frequency.
  const auto* factors = reinterpret_cast<const float*>(f.data("rope_freqs.weight"));
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(factors[i], static_cast<float>(backends::cpu::kernels().rope_inverse_frequency(i, 16, 500000.0, {}) /
                                                   backends::cpu::kernels().rope_inverse_frequency(i, 16, 500000.0, c.rope_scaling)));
}

// What the model directory says beside its tokenizer, as llama.cpp's converter writes it: an added
// token that tokenizer.json does not mark special (Qwen's <tool_call>) is user-defined (4), not a
// control token (3), unless it looks like one (<|...|>); the end-of-sequence id is
// tokenizer_config.json's eos_token (the chat's <|eot_id|>, not the document end); BOS comes from
// config.json where the tokenizer adds none; the chat templates go along.
TEST(GgufExport, AddedTokensEndOfSequenceAndChatTemplatesAreLlamaCpps) {
  DIFFTX_REQUIRE_DATA("hf/llama3/tokenizer.json");
  testing::TempDir dir;
  json tokenizer_json = json::parse(io::read_whole_file(data::data_root() / "hf/llama3/tokenizer.json"));
  for (json& t : tokenizer_json["added_tokens"]) {
    if (t["id"] == 128255) t["content"] = "<tool_call>", t["special"] = false;
    if (t["id"] == 128254) t["content"] = "<|fim_pad|>", t["special"] = false;
  }
  testing::write_bytes(dir / "tokenizer.json", tokenizer_json.dump());
  testing::write_bytes(dir / "tokenizer_config.json", json{{"eos_token", "<|eot_id|>"},
                                                           {"chat_template", json::array({
                                                               {{"name", "default"}, {"template", "D{{ bos_token }}"}},
                                                               {{"name", "tool_use"}, {"template", "T"}}})}}
                                                          .dump());
  testing::write_bytes(dir / "config.json", R"({"bos_token_id": 128000, "eos_token_id": [128001, 128009]})");
  const data::Tokenizer tok = data::load_tokenizer(dir.path().string());
  const GgufChatMetadata chat = gguf_chat_metadata(dir.path(), tok);
  EXPECT_EQ(chat.eos_id, 128009);
  EXPECT_EQ(chat.bos_id, 128000);
  const Model model = testing::random_model(llama_like(), 9);
  save_gguf_model(model, tok, WeightType::q8_0, dir / "m.gguf", std::nullopt, chat);
  const GgufFile f(dir / "m.gguf");
  const json& tokens = f.metadata.at("tokenizer.ggml.tokens");
  const json& types = f.metadata.at("tokenizer.ggml.token_type");
  EXPECT_EQ(tokens[128255], "<tool_call>");
  EXPECT_EQ(types[128255], 4);  // user-defined
  EXPECT_EQ(types[128254], 3);  // looks like a control token
  EXPECT_EQ(types[128009], 3);
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.eos_token_id"), 128009);
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.bos_token_id"), 128000);
  EXPECT_EQ(f.metadata.at("tokenizer.ggml.add_bos_token"), false);
  EXPECT_EQ(f.metadata.at("tokenizer.chat_template"), "D{{ bos_token }}");
  EXPECT_EQ(f.metadata.at("tokenizer.chat_template.tool_use"), "T");
}

// --head-dtype q4_0: llama.cpp's pure Q4_0 layout, the embedding and output in Q4_0 too (GGML type
// 2), holding the bytes difftx's own quantizer gives; the other matrices keep the plan's type.
TEST(GgufExport, HeadTypeAppliesToTheEmbeddingAndOutput) {
  DIFFTX_REQUIRE_DATA("hf/llama3/tokenizer.json");
  const data::Tokenizer tok = data::load_tokenizer((data::data_root() / "hf/llama3").string());
  const ModelConfig c = llama_like();
  const Model model = testing::random_model(c, 10);
  testing::TempDir dir;
  save_gguf_model(model, tok, WeightType::q8_0, dir / "m.gguf", WeightType::q4_0);
  const GgufFile f(dir / "m.gguf");
  EXPECT_EQ(f.metadata.at("general.file_type"), 7);  // named by the matrices' type
  EXPECT_EQ(f.tensors.at("blk.0.ffn_up.weight").type, 8u);
  for (const char* name : {"token_embd.weight", "output.weight"}) {
    EXPECT_EQ(f.tensors.at(name).type, 2u) << name;
    const ParamInfo& p = *model.table.find(name == std::string("output.weight") ? "lm_head.weight"
                                                                               : "model.embed_tokens.weight");
    std::vector<unsigned char> want(kernels::weight_matrix_bytes(WeightType::q4_0, p.shape[0], p.shape[1]));
    backends::cpu::kernels().quantize_rows(WeightType::q4_0, model.host_weights() + p.offset, want.data(), p.shape[0], p.shape[1]);
    EXPECT_EQ(std::memcmp(f.data(name), want.data(), want.size()), 0) << name;
  }
}

TEST(GgufExport, DiffModelsAndUnknownSplitPatternsAreRefused) {
  const ModelConfig diff = testing::small_config(kernels::AttentionKind::diff, {});
  EXPECT_NE(testing::error_of([&] { require_gguf_architecture(diff); }).find("no architecture for diff attention"),
            std::string::npos);
  DIFFTX_REQUIRE_DATA("hf/llama3/tokenizer.json");
  EXPECT_EQ(gguf_pre_tokenizer(data::load_tokenizer("cl100k_base")), "llama-bpe");
  EXPECT_EQ(gguf_pre_tokenizer(data::load_tokenizer("r50k_base")), "gpt-2");
  EXPECT_NE(testing::error_of([] { gguf_pre_tokenizer(data::load_tokenizer("o200k_base")); })
                .find("no pre-tokenizer"), std::string::npos);
}

}  // namespace
}  // namespace difftx::model
