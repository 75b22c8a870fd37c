// `difftx bench vulkan`: the Vulkan backend's kernels at the shapes of a model config (default
// the 1.2B Llama shape, configs/hf/llama-1b.json), timed by the device's own clock (timestamp
// queries around many calls, best of --rounds), beside the device's copy rate measured in the
// same run:
//   copy:    a device-to-device copy of --copy-mib MiB, by the copy command and by a shader, GB/s
//            counting bytes read and written (copy_gbs: the better, the denominator below)
//   dispatch: the fixed cost of one command, on the host (recording) and on the device
//            (--copy-only: these and the device line alone)
//   norm:    RMSNorm, LayerNorm and PolyNorm (and DIFF's per-head norm) at --rows and --prompt rows
//   matmul:  each projection of one layer and the LM head, per weight type, at --rows rows of x
//            in the gemv order (decode: weight GB/s and its fraction of the copy rate) and at
//            --prompt rows in the gemm order (prefill: TFLOPS)
//   prefill: the fused attention of one layer over a --prompt-token sequence (TFLOPS)
//   prompt:  the engine's prefill attention: the --prompt rows of one sequence through paged
//            attention over their own pages, as one engine step (TFLOPS), with the rows sharing
//            their loads in groups and (the shader before groups) each row alone; the same for a
//            draft's 7 verification rows at the end of the longest --context (draft_attention)
//   decode:  paged decode attention of --rows rows over each --context's cached positions (KV GB/s)
// One line per measurement (JSON lines with --json). The model-level figures (tokens per second
// of a whole forward) come from `bench infer --device vulkan` once the engine computes through the
// backend; these are the kernels it is made of.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan.h"
#include "backends/vulkan/vulkan_backend.h"
#include "benches.h"
#include "core/error.h"
#include "core/rng.h"
#include "io/json_file.h"
#include "kernels/attention/attention.h"
#include "infer/engine.h"
#include "kernels/attention/decode_attention.h"
#include "measure.h"
#include "model/config.h"
#include "model/model_io.h"

namespace difftx::bench {
namespace {

using backends::DeviceBuffer;
using backends::vulkan::VulkanBackend;

// Best device time of `calls` calls of fn, over `rounds` rounds, per call, in ms.
double best_ms(VulkanBackend& vk, int64_t rounds, int64_t calls, const std::function<void()>& fn) {
  fn();  // pipelines created, memory touched
  double best = 1e30;
  for (int64_t r = 0; r < rounds; ++r)
    best = std::min(best, vk.device_milliseconds([&] {
      for (int64_t i = 0; i < calls; ++i) fn();
    }) / static_cast<double>(calls));
  return best;
}

// Random bytes of a matrix that are valid weights: F16/BF16 halves of small magnitude, block
// scales likewise (a random F16 pattern could be inf or NaN).
DeviceBuffer random_weights(VulkanBackend& vk, kernels::WeightType type, int64_t rows, int64_t cols) {
  const std::vector<uint8_t> bytes = make_bench_weights(type, std::min<int64_t>(rows, 64), cols);
  const int64_t row_bytes = kernels::weight_row_bytes(type, cols);
  DeviceBuffer b = vk.allocate(rows * row_bytes, false);
  for (int64_t r = 0; r < rows; r += 64)
    vk.upload(backends::device_cast<void>(b.as<unsigned char>() + r * row_bytes), bytes.data(),
              std::min<int64_t>(64, rows - r) * row_bytes);
  return b;
}

DeviceBuffer random_floats(VulkanBackend& vk, int64_t n, Rng& rng, double scale = 1.0) {
  std::vector<float> host(n);
  for (float& x : host) x = static_cast<float>(rng.uniform(-scale, scale));
  DeviceBuffer b = vk.allocate(n * 4, false);
  vk.upload(b.as<void>(), host.data(), n * 4);
  return b;
}

// The engine's pages (its default block size), as paged attention reads them in a step.
const int64_t kPage = infer::EngineOptions{}.kv_block_tokens;

// Rows of paged attention over a pool of zeros (valid keys, values and scales) in the engine's
// pages, the blocks scattered; their queries and lambdas at random.
struct PagedBench {
  int64_t layer_bytes = 0;
  DeviceBuffer pool, lengths, tables, blocks, q, lambda, out;
  backends::PagedKv kv;

  PagedBench(VulkanBackend& vk, const kernels::AttentionVariant& a, kernels::KvStorage storage, int64_t blocks_,
             const std::vector<int32_t>& row_lengths, const std::vector<int32_t>& row_tables, Rng& rng) {
    const kernels::DecodeAttentionDims kd{a, kPage, storage};
    const int64_t key_bytes = kernels::key_region_bytes(kd), rows = static_cast<int64_t>(row_lengths.size());
    layer_bytes = key_bytes + kernels::value_region_bytes(kd);
    pool = vk.allocate(blocks_ * layer_bytes);
    std::vector<int32_t> block_ids(blocks_);
    for (int64_t b = 0; b < blocks_; ++b) block_ids[b] = static_cast<int32_t>((b * 7) % blocks_);
    lengths = vk.allocate(rows * 4), tables = vk.allocate(rows * 4), blocks = vk.allocate(blocks_ * 4);
    vk.upload(lengths.as<void>(), row_lengths.data(), rows * 4);
    vk.upload(tables.as<void>(), row_tables.data(), rows * 4);
    vk.upload(blocks.as<void>(), block_ids.data(), blocks_ * 4);
    q = random_floats(vk, rows * a.q_width(), rng);
    lambda = random_floats(vk, std::max<int64_t>(1, a.lambda_floats(rows)), rng, 0.5);
    out = vk.allocate(rows * a.out_width() * 4, false);
    kv = {kd, pool.as<unsigned char>(), 1, layer_bytes, key_bytes, blocks_};
  }
  backends::PagedRows rows(int64_t count, int64_t max_length, int64_t longest_run) const {
    return {count, max_length, lengths.as<const int32_t>(), tables.as<const int32_t>(), blocks.as<const int32_t>(),
            longest_run};
  }
  void run(VulkanBackend& vk, const backends::PagedRows& r) const {
    vk.paged_attention(kv, 0, r, q.as<const float>(), lambda.as<const float>(), out.as<float>());
  }
};

}  // namespace

int bench_vulkan(cli::Args& args) {
  const bool json = args.flag("json");
  const std::string device = args.get("device", "vulkan");
  const std::string config_path = args.get("config", "configs/hf/llama-1b.json");
  const auto types = args.get_word_list("types", "f16,q8_0,q4_0,q4_k");
  const int64_t rows = args.get_int("rows", 1, cli::IntRange{1, 256});
  const int64_t prompt = args.get_int("prompt", 512, cli::IntRange{1, 16384});
  const std::vector<int64_t> contexts = args.get_int_list("context", "4096", cli::IntRange{1, 131072});
  const int64_t context = *std::max_element(contexts.begin(), contexts.end());
  const int64_t rounds = args.get_int("rounds", 3, cli::IntRange{1, 100});
  const int64_t copy_mib = args.get_int("copy-mib", 1024, cli::IntRange{1, 65536});
  const bool copy_only = args.flag("copy-only");
  args.finish();
  const std::optional<model::ModelConfig> config =  // --copy-only reads no model's shapes
      copy_only ? std::nullopt
                : std::optional(model::model_config_from_json(io::read_json_file(config_path), config_path));
  auto& vk = static_cast<VulkanBackend&>(backends::vulkan::open_device(device));
  print_row(json, {str("op", "device"), str("name", vk.info().name),
                   num("memory_gib", vk.info().memory_bytes / 1073741824.0, 1), str("features", vk.info().features),
                   num("cooperative_matrix", vk.cooperative_matrix() ? 1 : 0, 0)});

  // The copy rate: read and write counted, as the bandwidth of a copy is usually given; the better
  // of the copy command and a shader's copy (scale by 1, one float an invocation), since a driver's
  // copy command need not reach what a shader streams (the denominator of the bars is the best).
  const int64_t copy_bytes = std::min<int64_t>(copy_mib << 20, vk.free_bytes() / 3) / 4 * 4;
  double copy_gbs = 0;
  {
    const DeviceBuffer a = vk.allocate(copy_bytes, true), b = vk.allocate(copy_bytes, false);
    const double command_ms = best_ms(vk, rounds, 4, [&] { vk.copy(b.as<void>(), a.as<const void>(), copy_bytes); });
    const double shader_ms =
        best_ms(vk, rounds, 4, [&] { vk.scale(b.as<float>(), a.as<const float>(), 1.0f, copy_bytes / 4); });
    const double command_gbs = 2.0 * copy_bytes / (command_ms * 1e6), shader_gbs = 2.0 * copy_bytes / (shader_ms * 1e6);
    copy_gbs = std::max(command_gbs, shader_gbs);
    print_row(json, {str("op", "copy"), num("mib", copy_bytes >> 20, 0), num("command_gbs", command_gbs, 1),
                     num("shader_gbs", shader_gbs, 1), num("copy_gbs", copy_gbs, 1)});
  }
  // What one command costs beside its work: 200 dispatches of an add over 64 floats, the host's
  // time to record them (bind, pipeline, descriptors, barrier; the best round) and the device's
  // time per dispatch (its launch and the barrier before it). A decode step issues a few hundred.
  {
    constexpr int64_t kDispatches = 200;  // within one batch (stream.cpp): no wait for the device
    Rng small(2);
    const DeviceBuffer sum = random_floats(vk, 64, small), term = random_floats(vk, 64, small);
    const auto record = [&] {
      for (int64_t i = 0; i < kDispatches; ++i) vk.add(sum.as<float>(), term.as<const float>(), 64);
    };
    double host_us = 1e30;
    for (int64_t r = 0; r < rounds; ++r) {
      vk.synchronize();
      const auto start = std::chrono::steady_clock::now();
      record();
      const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
      host_us = std::min(host_us, took.count() / kDispatches);
    }
    const double device_us = best_ms(vk, rounds, 1, record) * 1e3 / kDispatches;
    print_row(json, {str("op", "dispatch"), num("dispatches", kDispatches, 0), num("host_us", host_us, 2),
                     num("device_us", device_us, 2)});
  }
  if (copy_only) return 0;
  const model::ModelConfig& c = *config;

  Rng rng(1);
  const kernels::AttentionVariant a = c.attention_variant();
  const int64_t D = c.hidden_size, F = c.intermediate_size;
  // The row norms, a workgroup a row: RMSNorm over the hidden width (and DIFF's per-head norm over
  // 2d, H rows a token, where the config has it), LayerNorm over it (the hybrid's) and PolyNorm
  // over the MLP's width (Motif's), at --rows rows (decode: a few workgroups, latency) and at
  // --prompt rows (prefill: bandwidth). gbs: the bytes of x read and y written (and u for PolyNorm).
  {
    const int64_t tokens = std::max(rows, prompt), widest = std::max(D, F);
    const int64_t most = tokens * std::max<int64_t>(c.num_attention_heads, 1);  // rows of the widest call
    const DeviceBuffer in = random_floats(vk, std::max(most * 2 * c.head_dim, tokens * widest), rng);
    const DeviceBuffer up = random_floats(vk, tokens * F, rng);
    const DeviceBuffer gain = random_floats(vk, widest, rng), bias = random_floats(vk, widest, rng);
    const DeviceBuffer out = vk.allocate(in.bytes(), false), stats = vk.allocate(most * 8, false);
    const auto x = in.as<const float>(), g = gain.as<const float>(), b = bias.as<const float>(),
               u = up.as<const float>();
    const auto y = out.as<float>(), mean = stats.as<float>(), rstd = stats.as<float>() + most;
    struct Norm {
      const char* name;
      int64_t width, rows_per_token, arrays;  // arrays: of rows x width read or written
      std::function<void(int64_t)> run;      // over that many rows
    };
    std::vector<Norm> norms = {
        {"rmsnorm", D, 1, 2, [&](int64_t n) { vk.rmsnorm_forward(x, g, y, rstd, n, D, 1e-5f); }},
        {"layernorm", D, 1, 2, [&](int64_t n) { vk.layernorm_forward(x, g, b, y, mean, rstd, n, D, 1e-5f); }},
        {"polynorm", F, 1, 3, [&](int64_t n) { vk.polynorm_glu_forward(x, u, g, b, y, n, F); }}};
    if (c.has_head_norm())
      norms.push_back({"head_norm", 2 * c.head_dim, c.num_attention_heads, 2,
                       [&](int64_t n) { vk.rmsnorm_forward(x, g, y, rstd, n, 2 * c.head_dim, 1e-5f); }});
    for (const Norm& n : norms)
      for (const int64_t t : {rows, prompt}) {
        const int64_t count = t * n.rows_per_token;
        const double us = best_ms(vk, rounds, 20, [&] { n.run(count); }) * 1e3;
        print_row(json, {str("op", "norm"), str("kernel", n.name), num("width", n.width, 0), num("rows", count, 0),
                         num("us", us, 2), num("gbs", n.arrays * 4.0 * count * n.width / (us * 1e3), 1)});
      }
  }
  struct Projection {
    const char* name;
    int64_t rows, cols;
  };
  const std::vector<Projection> projections = {{"q", a.q_width(), D}, {"k", a.k_width(), D}, {"v", a.v_width(), D},
                                               {"o", D, a.out_width()},  {"gate", F, D},       {"down", D, F},
                                               {"head", c.vocab_size, D}};
  const DeviceBuffer x = random_floats(vk, prompt * std::max(D, F), rng);
  const DeviceBuffer y = vk.allocate(prompt * std::max({F, D, c.vocab_size}) * 4, false);
  for (const std::string& type_name : types) {
    const kernels::WeightType type = kernels::parse_weight_type(type_name);
    for (const Projection& p : projections) {
      const DeviceBuffer w = random_weights(vk, type, p.rows, p.cols);
      const backends::DeviceMatrix m =
          vk.prepare_matrix({type, w.as<const void>(), p.rows, p.cols, nullptr}, false, false).matrix;
      const double bytes = static_cast<double>(kernels::weight_matrix_bytes(type, p.rows, p.cols));
      const double gemv = best_ms(vk, rounds, 20, [&] {
        vk.matmul(m, x.as<const float>(), y.as<float>(), rows, false, kernels::MatmulOrder::gemv);
      });
      const double gemm = best_ms(vk, rounds, 2, [&] {
        vk.matmul(m, x.as<const float>(), y.as<float>(), prompt, false, kernels::MatmulOrder::gemm);
      });
      const double gbs = bytes / (gemv * 1e6);
      print_row(json, {str("op", "matmul"), str("type", type_name), str("matrix", p.name), num("rows", p.rows, 0),
                       num("cols", p.cols, 0), num("gemv_rows", rows, 0), num("gemv_us", gemv * 1e3, 1),
                       num("weight_gbs", gbs, 1), num("of_copy", gbs / copy_gbs, 3), num("gemm_rows", prompt, 0),
                       num("gemm_ms", gemm, 3), num("gemm_tflops", 2.0 * prompt * p.rows * p.cols / (gemm * 1e9), 2)});
    }
  }

  // Attention of one layer: the fused prefill over the prompt, and paged decode over the context.
  const kernels::AttentionDims dims = c.attention_dims(1, prompt);
  {
    const DeviceBuffer q = random_floats(vk, prompt * a.q_width(), rng),
                       k = random_floats(vk, prompt * a.k_width(), rng);
    const DeviceBuffer v = random_floats(vk, prompt * a.v_width(), rng);
    const DeviceBuffer lambda = random_floats(vk, std::max<int64_t>(1, a.lambda_floats(prompt)), rng, 0.5);
    const DeviceBuffer out = vk.allocate(prompt * a.out_width() * 4, false);
    const double ms = best_ms(vk, rounds, 2, [&] {
      vk.attention_forward(dims, q.as<const float>(), k.as<const float>(), v.as<const float>(),
                           lambda.as<const float>(), out.as<float>(), {});
    });
    print_row(json,
              {str("op", "prefill_attention"), str("attention", kernels::attention_kind_name(c.attention)),
               num("tokens", prompt, 0), num("ms", ms, 3), num("tflops", a.forward_flops(prompt) / (ms * 1e9), 2)});
  }
  // Runs of one sequence's consecutive positions through paged attention over its pages (BF16), as
  // one engine step: the engine's prefill (`prompt` rows from position 0) and a draft's
  // verification (7 rows, the default 6 drafted and the last taken, at the end of `context`);
  // grouped: the rows share the loads of groups (PagedRows::longest_run); alone: each row its own.
  for (const auto& [op, count, first] : {std::tuple<const char*, int64_t, int64_t>{"prompt_attention", prompt, 1},
                                         {"draft_attention", 7, std::max<int64_t>(1, context - 6)}}) {
    std::vector<int32_t> lengths(count), tables(count, 0);
    for (int64_t i = 0; i < count; ++i) lengths[i] = static_cast<int32_t>(first + i);
    const int64_t longest = first + count - 1;
    const PagedBench b(vk, a, kernels::KvStorage::bf16, (longest + kPage - 1) / kPage, lengths, tables, rng);
    for (const bool grouped : {true, false}) {
      const backends::PagedRows pr = b.rows(count, longest, grouped ? count : 1);
      const double ms = best_ms(vk, rounds, 2, [&] { b.run(vk, pr); });
      print_row(json, {str("op", op), str("attention", kernels::attention_kind_name(c.attention)),
                       str("rows", grouped ? "grouped" : "alone"), num("count", count, 0), num("context", longest, 0),
                       num("ms", ms, 3),
                       num("tflops", first == 1 ? a.forward_flops(prompt) / (ms * 1e9) : 0.0, 2)});
    }
  }
  for (const int64_t context : contexts) {
    for (kernels::KvStorage storage : {kernels::KvStorage::bf16, kernels::KvStorage::int8}) {
      // The figure a decode step pays: `rows` rows over `context` cached positions each.
      const int64_t per_row = (context + kPage - 1) / kPage;
      std::vector<int32_t> lengths(rows, static_cast<int32_t>(context)), tables(rows);
      for (int64_t i = 0; i < rows; ++i) tables[i] = static_cast<int32_t>(i * per_row);
      const PagedBench b(vk, a, storage, rows * per_row, lengths, tables, rng);
      const backends::PagedRows pr = b.rows(rows, context, 1);
      const double ms = best_ms(vk, rounds, 10, [&] { b.run(vk, pr); });
      const double kv_bytes = static_cast<double>(rows) * b.layer_bytes * per_row;
      print_row(json, {str("op", "decode_attention"), str("attention", kernels::attention_kind_name(c.attention)),
                       str("kv", kernels::kv_storage_name(storage)), num("block", kPage, 0), num("rows", rows, 0),
                       num("context", context, 0), num("us", ms * 1e3, 1), num("kv_gbs", kv_bytes / (ms * 1e6), 1),
                       num("of_copy", kv_bytes / (ms * 1e6) / copy_gbs, 3)});
    }
  }
  return 0;
}

}  // namespace difftx::bench
