// Attention: the fused differential prefill over a batch's own keys (attention_prefill.comp),
// and the paged KV cache's store and split-K decode attention over the block table
// (paged_store.comp, paged_attention.comp then paged_merge.comp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/vulkan/ops_common.h"
#include "backends/vulkan/vulkan_backend.h"
#include "core/error.h"
#include "core/option_name.h"

namespace difftx::backends::vulkan {
namespace {

constexpr int64_t kKvWindows = 8;        // KV_WINDOWS in shaders/kv_push.glsl
constexpr int64_t kPrefillMaxD = 128;    // DMAX in attention_prefill.comp
constexpr int64_t kPrefillMaxVw = 256;   // the largest VMAX
constexpr int64_t kPrefillRows = 16;     // BR
constexpr int64_t kDecodeMaxPairs = 32;  // PMAX in paged_attention.comp: rows * maps per kv head
constexpr int64_t kDecodeMaxQ = 2048;    // QMAX
constexpr int64_t kDecodeMaxAcc = 128 * 32;  // WG * ACC
// Decode attention's split-K chunks (shaders/decode_chunk.glsl): a row of length n is split into
// chunks of the smallest Capabilities::decode_min_chunk * 2^k positions that cover its positions in
// at most kMaxDecodeItems chunks: on one device a function of nothing but the length, so a row's
// bits are too.
constexpr int64_t kMaxDecodeItems = 64;  // + 1 (a window's) at most paged_merge.comp's MAX_ITEMS (128)
static_assert(kMaxDecodeItems + 1 <= 128);

uint32_t kind_code(kernels::AttentionKind kind) {
  switch (kind) {
    case kernels::AttentionKind::baseline: return 0;
    case kernels::AttentionKind::diff: return 1;
    case kernels::AttentionKind::diff2: return 2;
    case kernels::AttentionKind::diff_grouped: return 3;
  }
  return 0;
}

uint32_t storage_code(kernels::KvStorage s) {
  return s == kernels::KvStorage::f32 ? 0 : s == kernels::KvStorage::bf16 ? 1 : 2;
}

// The fields of shaders/kv_push.glsl's KV_PUSH.
struct KvPush {
  uint32_t P, d, Hkv, v1, storage, layer, layers, layer_bytes, per_window, delta, blocks;
};

KvPush kv_push(const PagedKv& kv, int64_t layer, uint32_t per_window, uint32_t delta) {
  const kernels::DecodeAttentionDims& a = kv.dims;
  return {u32(a.capacity), u32(a.d), u32(a.Hkv), a.v1_layout() ? 1u : 0u, storage_code(a.storage), u32(layer),
          u32(kv.layers), u32(kv.layer_bytes), per_window, delta, u32(kv.blocks)};
}

void check_kv(const PagedKv& kv, int64_t layer, const char* op) {
  const kernels::DecodeAttentionDims& a = kv.dims;
  a.validate();
  DIFFTX_CHECK(a.capacity > 0 && a.capacity % kernels::kKeyTile == 0, "vulkan ", op, ": block capacity ", a.capacity,
               " must be a positive multiple of ", kernels::kKeyTile);
  DIFFTX_CHECK(kv.layers > 0 && layer >= 0 && layer < kv.layers, "vulkan ", op, ": layer ", layer, " of ", kv.layers);
  DIFFTX_CHECK(kv.blocks > 0, "vulkan ", op, ": the pool has ", kv.blocks, " blocks");
  DIFFTX_CHECK(kv.key_bytes == kernels::key_region_bytes(a) &&
                   kv.layer_bytes >= kv.key_bytes + kernels::value_region_bytes(a) && kv.layer_bytes % 4 == 0,
               "vulkan ", op, ": the pool's layout (key_bytes ", kv.key_bytes, ", layer_bytes ", kv.layer_bytes,
               ") is not decode_attention.h's (", kernels::key_region_bytes(a), " + ", kernels::value_region_bytes(a),
               ")");
}

// Whole (block, layer) regions of layer_bytes one binding holds from `delta` bytes past an aligned
// offset (fit), and the most a window holds when the pool takes several (windowed: a multiple of
// the regions that keep every window's start on the binding alignment).
struct KvFit {
  int64_t fit, windowed;
};

KvFit kv_fit(const Capabilities& caps, int64_t layer_bytes, int64_t delta) {
  const int64_t fit = (caps.max_binding_bytes - delta) / layer_bytes;
  const int64_t unit = caps.binding_alignment / std::gcd(layer_bytes, caps.binding_alignment);
  return {fit, fit / unit * unit};
}

}  // namespace

int64_t VulkanBackend::max_paged_kv_regions(int64_t layer_bytes) const {
  const KvFit f = kv_fit(context_->caps(), layer_bytes, 0);  // a pool is an allocation of its own, at offset 0
  return std::max(f.fit, kKvWindows * f.windowed);
}

VulkanBackend::KvWindows VulkanBackend::bind_kv(const PagedKv& kv, const char* what) {
  const Resolved r = memory_.resolve(kv.base.address(), kv.layer_bytes, what);
  const Capabilities& caps = context_->caps();
  const int64_t align = caps.binding_alignment, layer_bytes = kv.layer_bytes;
  const int64_t aligned = r.offset / align * align, delta = r.offset - aligned;
  const int64_t room = (r.size - r.offset) / layer_bytes;  // whole regions from base to the allocation's end
  DIFFTX_CHECK(kv.blocks <= room / kv.layers, "vulkan ", what, ": a pool of ", kv.blocks, " blocks of ",
               kv.layers * layer_bytes, " bytes runs past its allocation (", r.size - r.offset, " bytes from base)");
  const int64_t regions = kv.blocks * kv.layers;  // the pool's: the shaders touch no other
  // Regions a window holds: all of them if they fit one binding, else as many as a window holds.
  const KvFit f = kv_fit(caps, layer_bytes, delta);
  const int64_t per_window = regions <= f.fit ? regions : f.windowed;
  DIFFTX_CHECK(per_window >= 1, "vulkan ", what, ": one layer of one block (", layer_bytes,
               " bytes) does not fit one binding of ", caps.max_binding_bytes);
  const int64_t windows = (regions + per_window - 1) / per_window;
  DIFFTX_CHECK(windows <= kKvWindows, "vulkan ", what, ": the KV pool (", regions * layer_bytes, " bytes) needs ",
               windows, " bindings of ", per_window * layer_bytes, " bytes; ", info().name, " is bound at most ",
               kKvWindows, " (", kKvWindows * per_window * layer_bytes, " bytes): ask for fewer with ",
               option_name("kv_tokens", kv.spelling), " or ", option_name("kv_bytes", kv.spelling));
  KvWindows k;
  k.per_window = u32(per_window);
  k.delta = u32(delta);
  for (int64_t w = 0; w < kKvWindows; ++w) {
    const int64_t at = aligned + (w < windows ? w : 0) * per_window * layer_bytes;
    const int64_t end = aligned + delta + regions * layer_bytes;  // the pool's end
    const int64_t range = std::min(end - at, delta + per_window * layer_bytes);  // region 0 of each at delta
    k.windows.push_back({r.buffer, static_cast<VkDeviceSize>(at), static_cast<VkDeviceSize>(range)});
  }
  return k;
}

void VulkanBackend::attention_forward(const kernels::AttentionDims& dims, DevicePtr<const float> q,
                                      DevicePtr<const float> k, DevicePtr<const float> v, DevicePtr<const float> lambda,
                                      DevicePtr<float> out, DeviceAttentionSaved saved) {
  dims.validate();
  const kernels::AttentionVariant a = dims.variant();
  DIFFTX_CHECK(dims.d <= kPrefillMaxD && a.value_width() <= kPrefillMaxVw, "vulkan attention_forward: head width ",
               dims.d, " (value width ", a.value_width(), "): the shader takes d <= ", kPrefillMaxD,
               " and value width <= ", kPrefillMaxVw);
  DIFFTX_CHECK(a.lambda_source() == kernels::LambdaSource::none || lambda, "vulkan attention_forward (",
               kernels::attention_kind_name(dims.kind), "): lambda must be given");
  const bool save = saved.lse && (saved.maps_out || !a.paired());
  struct {
    uint32_t q_at, k_at, v_at, lambda_at, out_at, lse_at, maps_at;
    uint32_t B, T, H, d, r, maps_per_kv, maps, kind;
    uint32_t q_width, k_width, v_width, out_width, vw;
    uint32_t save, window;
    float scale;
  } push;
  const int64_t T = dims.T, qw = a.q_width(), kw = a.k_width(), vw = a.v_width(), ow = a.out_width();
  const int64_t lambda_row = a.lambda_source() == kernels::LambdaSource::token_logits ? dims.H : 0;
  const int64_t widest = std::max({qw, kw, vw, ow, lambda_row, a.maps() * a.value_width()}) * T * 4;
  const int64_t step = rows_per_binding(widest, "attention sequences");  // whole sequences per dispatch
  for (int64_t b0 = 0; b0 < dims.B; b0 += step) {
    const int64_t B = std::min(step, dims.B - b0), rows = b0 * T;
    const Bound qb = bind((q + rows * qw).address(), B * T * qw * 4, "attention q");
    const Bound kb = bind((k + rows * kw).address(), B * T * kw * 4, "attention k");
    const Bound vb = bind((v + rows * vw).address(), B * T * vw * 4, "attention v");
    const Bound ob = bind((out + rows * ow).address(), B * T * ow * 4, "attention out");
    const Bound lb =
        bind_optional(!lambda ? 0 : lambda_row ? (lambda + rows * lambda_row).address() : lambda.address(),
                      std::max<int64_t>(1, B * T * lambda_row) * 4, "attention lambda");
    // lse [B, maps, T] and maps_out [B, T, maps, vw] of these sequences.
    const Bound sb =
        bind_optional(save ? (saved.lse + b0 * a.maps() * T).address() : 0, B * a.maps() * T * 4, "attention lse");
    const Bound mb =
        bind_optional(save && a.paired() ? (saved.maps_out + rows * a.maps() * a.value_width()).address() : 0,
                      B * T * a.maps() * a.value_width() * 4, "attention maps_out");
    push = {qb.words(), kb.words(), vb.words(), lb.words(), ob.words(), sb.words(), mb.words(),
            u32(B), u32(T), u32(dims.H), u32(dims.d), u32(a.paired() ? a.r : 1), u32(a.maps_per_kv_head()),
            u32(a.maps()),
            kind_code(dims.kind), u32(qw), u32(kw), u32(vw), u32(ow), u32(a.value_width()), save ? 1u : 0u,
            u32(dims.window), static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims.d)))};
    const int64_t tiles = (T + kPrefillRows - 1) / kPrefillRows;
    // The variant whose accumulators hold the value width (VMAX: 64, 128 or 256).
    int64_t value_max = 64;
    while (value_max < a.value_width()) value_max *= 2;
    run("attention_prefill_v" + std::to_string(value_max), {1, 1, 1, 1, 1, 1, 1},
        {qb.info, kb.info, vb.info, lb.info, ob.info, sb.info, mb.info},
        &push, sizeof push, tiles * dims.H * B);
  }
}

void VulkanBackend::paged_store(const PagedKv& kv, int64_t layer, DevicePtr<const int32_t> slots, int64_t rows,
                                DevicePtr<const float> k, DevicePtr<const float> v) {
  check_kv(kv, layer, "paged_store");
  DIFFTX_CHECK(rows >= 0, "vulkan paged_store: rows = ", rows);
  if (rows == 0) return;
  const kernels::DecodeAttentionDims& a = kv.dims;
  const KvWindows windows = bind_kv(kv, "paged_store");
  struct {
    KvPush kv;
    uint32_t slots_at, k_at, v_at, rows;
  } push;
  const int64_t kw = a.k_width(), vw = a.v_width();
  const int64_t step = rows_per_binding(std::max(kw, vw) * 4, "paged_store rows");
  for (int64_t i0 = 0; i0 < rows; i0 += step) {
    const int64_t m = std::min(step, rows - i0);
    const Bound sb = bind((slots + i0).address(), m * 4, "paged_store slots");
    const Bound kb = bind((k + i0 * kw).address(), m * kw * 4, "paged_store k");
    const Bound vb = bind((v + i0 * vw).address(), m * vw * 4, "paged_store v");
    push = {kv_push(kv, layer, windows.per_window, windows.delta), sb.words(), kb.words(), vb.words(), u32(m)};
    std::vector<VkDescriptorBufferInfo> buffers{sb.info, kb.info, vb.info};
    buffers.insert(buffers.end(), windows.windows.begin(), windows.windows.end());
    run("paged_store", {1, 1, 1, kKvWindows}, buffers, &push, sizeof push, m * a.Hkv);
  }
}

void VulkanBackend::paged_attention(const PagedKv& kv, int64_t layer, const PagedRows& rows, DevicePtr<const float> q,
                                    DevicePtr<const float> lambda, DevicePtr<float> out) {
  check_kv(kv, layer, "paged_attention");
  DIFFTX_CHECK(rows.count >= 0 && rows.max_length >= 0 && rows.max_length <= INT32_MAX, "vulkan paged_attention: ",
               rows.count, " rows, longest ", rows.max_length, " (lengths are int32)");
  if (rows.count == 0) return;
  DIFFTX_CHECK(rows.max_length >= 1, "vulkan paged_attention: every row attends to at least one position");
  const kernels::DecodeAttentionDims& a = kv.dims;
  const int64_t M = a.maps_per_kv_head(), vw = a.value_width(), qw = a.attention_dims().q_width(), ow = a.out_width();
  DIFFTX_CHECK(M <= kDecodeMaxPairs && M * a.d <= kDecodeMaxQ && M * vw <= kDecodeMaxAcc, "vulkan paged_attention: ", M,
               " maps of width ", a.d, " (values ", vw, ") per kv head: the shader takes ", kDecodeMaxPairs, " maps, ",
               kDecodeMaxQ, " query and ", kDecodeMaxAcc, " output floats per kv head");
  DIFFTX_CHECK(a.lambda_source() == kernels::LambdaSource::none || lambda, "vulkan paged_attention (",
               kernels::attention_kind_name(a.kind), "): lambda must be given");
  std::lock_guard lock(mutex_);  // the scratch is the backend's
  const KvWindows windows = bind_kv(kv, "paged_attention");
  // A row's items: at most kMaxDecodeItems chunks of its length (the window's may touch one
  // more), and no more than its positions in chunks of the smallest size.
  const int64_t min_chunk = context_->caps().decode_min_chunk;
  const int64_t max_chunks = std::min((rows.max_length + min_chunk - 1) / min_chunk,
                                      kMaxDecodeItems + (a.window > 0 ? 1 : 0));
  // A group's rows (a sequence's consecutive positions) share the keys and values the shader
  // loads: the power of two that holds the longest run, or as many as its shared memory and
  // accumulators hold; the variant is the smallest bound on pairs (1, 2, .., 32) that holds the
  // group's rows * M. Windowed, their windows start in up to two chunks: one more per group.
  const int64_t fits = std::min({kDecodeMaxPairs / M, kDecodeMaxQ / (M * a.d), kDecodeMaxAcc / (M * vw)});
  int64_t group = 1, pairs = 1;
  while (group < std::min(fits, rows.longest_run)) group *= 2;
  group = std::min(group, fits);
  while (pairs < group * M) pairs *= 2;
  const int64_t slots = max_chunks + (a.window > 0 ? 1 : 0);
  const int64_t item_floats = M * (vw + 2), row_floats = a.Hkv * max_chunks * item_floats;
  const int64_t lambda_row = a.lambda_source() == kernels::LambdaSource::token_logits ? a.H : 0;
  const int64_t step = rows_per_binding(std::max({row_floats, qw, ow}) * 4, "paged_attention rows");
  const int64_t scratch = std::min(step, rows.count) * row_floats * 4;
  const uint64_t parts = grown(attention_parts_, scratch);
  struct {
    KvPush kv;
    uint32_t M, r, count, group, q_at, q_width, lengths_at, tables_at, blocks_at, part_at, min_chunk, max_items;
    uint32_t max_chunks, slots;
    uint32_t window;
    float scale;
    uint32_t max_length;
  } push;
  struct {
    uint32_t Hkv, M, vw, H, r, kind, lengths_at, lambda_at, out_at, out_width, part_at, min_chunk, max_items,
        max_chunks, count;
    uint32_t window, max_length;
  } merge;
  // The block list: every entry from `blocks` to its allocation's end that fits one binding.
  const Resolved blocks = memory_.resolve(rows.blocks.address(), 4, "paged_attention blocks");
  const int64_t block_entries = std::min((blocks.size - blocks.offset) / 4, rows_per_binding(4, "blocks"));
  const Bound bb = bind(rows.blocks.address(), block_entries * 4, "paged_attention blocks");
  const uint32_t r = u32(a.paired() ? a.r : 1);
  for (int64_t i0 = 0; i0 < rows.count; i0 += step) {
    const int64_t m = std::min(step, rows.count - i0);
    const Bound lb = bind((rows.lengths + i0).address(), m * 4, "paged_attention lengths");
    const Bound tb = bind((rows.tables + i0).address(), m * 4, "paged_attention tables");
    const Bound qb = bind((q + i0 * qw).address(), m * qw * 4, "paged_attention q");
    const Bound pb = bind(parts, m * row_floats * 4, "paged_attention scratch");
    push = {kv_push(kv, layer, windows.per_window, windows.delta), u32(M), r, u32(m), u32(group), qb.words(), u32(qw),
            lb.words(), tb.words(), bb.words(), pb.words(), u32(min_chunk), u32(kMaxDecodeItems),
            u32(max_chunks), u32(slots),
            u32(a.window), static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.d))), u32(rows.max_length)};
    std::vector<VkDescriptorBufferInfo> buffers{qb.info, lb.info, tb.info, bb.info, pb.info};
    buffers.insert(buffers.end(), windows.windows.begin(), windows.windows.end());
    const bool own_loads = group == 1 && !context_->caps().shared_value_loads;  // "s": values loaded once
    run("paged_attention_p" + std::to_string(pairs) + (own_loads ? "" : "s"), {1, 1, 1, 1, 1, kKvWindows}, buffers,
        &push, sizeof push, m * a.Hkv * slots);

    const Bound lamb =
        bind_optional(!lambda ? 0 : lambda_row ? (lambda + i0 * lambda_row).address() : lambda.address(),
                      std::max<int64_t>(1, m * lambda_row) * 4, "paged_attention lambda");
    const Bound ob = bind((out + i0 * ow).address(), m * ow * 4, "paged_attention out");
    merge = {u32(a.Hkv), u32(M), u32(vw), u32(a.H), r, kind_code(a.kind), lb.words(), lamb.words(), ob.words(), u32(ow),
             pb.words(), u32(min_chunk), u32(kMaxDecodeItems), u32(max_chunks), u32(m), u32(a.window),
             u32(rows.max_length)};
    run("paged_merge", {1, 1, 1, 1}, {pb.info, lb.info, lamb.info, ob.info}, &merge, sizeof merge, m * a.H);
  }
}

}  // namespace difftx::backends::vulkan
