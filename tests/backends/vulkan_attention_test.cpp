// Vulkan attention against the double references: the fused prefill for every variant
// (attention_forward_reference; its saved log-sum-exp and per-map outputs against the CPU
// kernel's), the paged KV store against kv_layout.cpp's store_kv byte for byte, and paged
// split-K decode attention over scattered block tables against decode_attention_reference, for
// KV storage F32, BF16 and INT8; each decode row's bits the same alone or among the others;
// and the same results when the pool and the sequences are cut into small bindings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/vulkan/vulkan_backend.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/decode_attention.h"
#include "reference/attention_reference.h"
#include "reference/decode_attention_reference.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {

using kernels::AttentionKind;
using kernels::KvStorage;

namespace {

using backends::DeviceBuffer;
using backends::vulkan::VulkanBackend;
using testing::VulkanTest;

// The variants, each with its heads (diff_grouped: r = 2 signal maps per noise map).
struct Variant {
  AttentionKind kind;
  int64_t H, Hkv, r;
};
const Variant kVariants[] = {{AttentionKind::baseline, 4, 2, 1},
                             {AttentionKind::diff, 4, 2, 1},
                             {AttentionKind::diff2, 4, 2, 1},
                             {AttentionKind::diff_grouped, 8, 2, 2}};

std::string name_of(const kernels::AttentionDims& a) {
  return std::string(kernels::attention_kind_name(a.kind)) + " B=" + std::to_string(a.B) + " T=" + std::to_string(a.T) +
         " H=" + std::to_string(a.H) + " Hkv=" + std::to_string(a.Hkv) + " d=" + std::to_string(a.d);
}

// ---- Prefill.

struct PrefillCase {
  kernels::AttentionDims dims;
  std::vector<float> q, k, v, lambda;
  static PrefillCase random(const Variant& v, int64_t B, int64_t T, int64_t d, uint64_t seed) {
    PrefillCase c{{v.kind, B, T, v.H, v.Hkv, d, v.r}, {}, {}, {}, {}};
    Rng rng(seed);
    c.q = testing::random_vector(B * T * c.dims.q_width(), rng, -2, 2);
    c.k = testing::random_vector(B * T * c.dims.k_width(), rng, -2, 2);
    c.v = testing::random_vector(B * T * c.dims.v_width(), rng);
    c.lambda = testing::random_vector(std::max<int64_t>(1, attention_lambda_floats(c.dims)), rng, -1, 1);
    return c;
  }
};

std::vector<float> prefill_on(VulkanBackend& vk, const PrefillCase& c, std::vector<float>* lse = nullptr,
                              std::vector<float>* maps = nullptr) {
  const kernels::AttentionDims& a = c.dims;
  const auto put = [&](const std::vector<float>& x) {
    DeviceBuffer b = vk.allocate(static_cast<int64_t>(x.size()) * 4);
    vk.upload(b.as<void>(), x.data(), static_cast<int64_t>(x.size()) * 4);
    return b;
  };
  const DeviceBuffer q = put(c.q), k = put(c.k), v = put(c.v), l = put(c.lambda);
  const int64_t out_floats = a.B * a.T * a.out_width();
  const DeviceBuffer out = vk.allocate(out_floats * 4);
  const int64_t lse_floats = kernels::attention_lse_floats(a);
  const int64_t maps_floats = std::max<int64_t>(1, kernels::attention_maps_out_floats(a));
  const DeviceBuffer lse_d = vk.allocate(lse_floats * 4), maps_d = vk.allocate(maps_floats * 4);
  backends::DeviceAttentionSaved saved{};
  if (lse) saved = {lse_d.as<float>(), a.kind == AttentionKind::baseline ? nullptr : maps_d.as<float>()};
  vk.attention_forward(a, q.as<const float>(), k.as<const float>(), v.as<const float>(),
                       a.kind == AttentionKind::baseline ? nullptr : l.as<const float>(), out.as<float>(), saved);
  std::vector<float> got(out_floats);
  vk.download(got.data(), out.as<const void>(), out_floats * 4);
  if (lse) {
    lse->resize(lse_floats);
    vk.download(lse->data(), lse_d.as<const void>(), lse_floats * 4);
  }
  if (maps && kernels::attention_maps_out_floats(a) > 0) {
    maps->resize(maps_floats);
    vk.download(maps->data(), maps_d.as<const void>(), maps_floats * 4);
  }
  return got;
}

TEST_F(VulkanTest, PrefillAttentionMatchesReferenceForEveryVariant) {
  int cases = 0;
  for (const Variant& v : kVariants)
    for (auto [B, T] : {std::pair<int64_t, int64_t>{1, 1}, {2, 17}, {1, 45}})
      for (int64_t d : {16, 24, 64}) {
        const PrefillCase c = PrefillCase::random(v, B, T, d, 300 + cases++);
        const kernels::AttentionDims& a = c.dims;
        std::vector<float> want(a.B * a.T * a.out_width());
        attention_forward_reference(a, c.q.data(), c.k.data(), c.v.data(), c.lambda.data(), want.data());
        std::vector<float> lse, maps;
        const auto got = prefill_on(vk(), c, &lse, &maps);
        for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << name_of(a) << " at " << i;
        // What the forward keeps, against the CPU kernel's.
        std::vector<float> cpu_out(got.size()), cpu_lse(kernels::attention_lse_floats(a)),
            cpu_maps(std::max<int64_t>(1, kernels::attention_maps_out_floats(a)));
        backends::cpu::kernels().attention_forward(a, c.q.data(), c.k.data(), c.v.data(), c.lambda.data(), cpu_out.data(),
                          {cpu_lse.data(), a.kind == AttentionKind::baseline ? nullptr : cpu_maps.data()});
        for (size_t i = 0; i < lse.size(); ++i) ASSERT_NEAR(lse[i], cpu_lse[i], 1e-5) << name_of(a) << " lse " << i;
        for (size_t i = 0; i < maps.size(); ++i) ASSERT_NEAR(maps[i], cpu_maps[i], 1e-5) << name_of(a) << " maps " << i;
      }
  // The widest head the shader takes (d = 128; V1 values 256 wide).
  const PrefillCase c = PrefillCase::random({AttentionKind::diff, 2, 1, 1}, 1, 20, 128, 999);
  std::vector<float> want(c.dims.T * c.dims.out_width());
  attention_forward_reference(c.dims, c.q.data(), c.k.data(), c.v.data(), c.lambda.data(), want.data());
  const auto got = prefill_on(vk(), c);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << name_of(c.dims) << " at " << i;
  const std::string wide =
      testing::error_of([&] { prefill_on(vk(), PrefillCase::random(kVariants[1], 1, 2, 256, 1)); });
  EXPECT_NE(wide.find("d <= 128"), std::string::npos) << wide;
}

// ---- The paged cache.

// A pool of `blocks` blocks of P positions for `layers` layers, in host memory, every byte 0xFF
// (NaN in F32 and BF16) so that a read of anything never stored shows; each layer region padded
// by 64 bytes beyond the layout (the pool's layer stride is its own).
struct HostPool {
  kernels::DecodeAttentionDims dims;
  int64_t layers, blocks, key_bytes, layer_bytes;
  std::vector<unsigned char> bytes;
  HostPool(const Variant& v, int64_t d, int64_t P, KvStorage storage, int64_t layers_, int64_t blocks_)
      : dims{{v.kind, v.H, v.Hkv, d, v.r}, P, storage}, layers(layers_), blocks(blocks_) {
    key_bytes = kernels::key_region_bytes(dims);
    layer_bytes = key_bytes + kernels::value_region_bytes(dims) + 64;
    bytes.assign(blocks * layers * layer_bytes, 0xFF);
  }
  unsigned char* region(int64_t block, int64_t layer) { return bytes.data() + (block * layers + layer) * layer_bytes; }
  backends::PagedKv on(const DeviceBuffer& base) const {
    return {dims, base.as<unsigned char>(), layers, layer_bytes, key_bytes, blocks};
  }
};

// One sequence's rows of keys and values, and its block table (scattered blocks).
struct Sequence {
  int64_t length;
  std::vector<int32_t> table;
  std::vector<float> k, v;  // [length][Hkv * key_width], [length][Hkv * value_width]
};

std::vector<Sequence> fill(HostPool& pool, const std::vector<int64_t>& lengths, int64_t layer, Rng& rng) {
  std::vector<int32_t> free_blocks(pool.blocks);
  for (int64_t i = 0; i < pool.blocks; ++i)
    free_blocks[i] = static_cast<int32_t>(pool.blocks - 1 - (i * 7) % pool.blocks);
  std::vector<Sequence> seqs;
  size_t next = 0;
  const int64_t P = pool.dims.capacity, kw = pool.dims.k_width(), vw = pool.dims.v_width();
  for (int64_t length : lengths) {
    Sequence s{length, {}, testing::random_vector(length * kw, rng, -2, 2), testing::random_vector(length * vw, rng)};
    for (int64_t b = 0; b < (length + P - 1) / P; ++b) s.table.push_back(free_blocks.at(next++));
    for (int64_t t = 0; t < length; ++t) {
      unsigned char* keys = pool.region(s.table[t / P], layer);
      kernels::store_kv(pool.dims, keys, keys + pool.key_bytes, t % P, 1, s.k.data() + t * kw, s.v.data() + t * vw);
    }
    seqs.push_back(std::move(s));
  }
  return seqs;
}

TEST_F(VulkanTest, PagedStoreWritesTheCacheLayout) {
  Rng rng(41);
  for (const Variant& v : kVariants)
    for (KvStorage storage : {KvStorage::f32, KvStorage::bf16, KvStorage::int8}) {
      HostPool want(v, 16, 32, storage, 2, 9);
      std::fill(want.bytes.begin(), want.bytes.end(), 0);
      const auto seqs = fill(want, {1, 70, 33}, 1, rng);
      // The same rows through the device, in one call, rows in another order than the positions.
      std::vector<int32_t> slots;
      std::vector<float> k, v_rows;
      const int64_t kw = want.dims.k_width(), vw = want.dims.v_width(), P = want.dims.capacity;
      for (int64_t t = 69; t >= 0; --t)
        for (const Sequence& s : seqs) {
          if (t >= s.length) continue;
          slots.push_back(static_cast<int32_t>(s.table[t / P] * P + t % P));
          k.insert(k.end(), s.k.begin() + t * kw, s.k.begin() + (t + 1) * kw);
          v_rows.insert(v_rows.end(), s.v.begin() + t * vw, s.v.begin() + (t + 1) * vw);
        }
      const DeviceBuffer pool = vk().allocate(static_cast<int64_t>(want.bytes.size()));
      const DeviceBuffer sd = to_device(slots), kd = to_device(k), vd = to_device(v_rows);
      vk().paged_store(want.on(pool), 1, sd.as<const int32_t>(), static_cast<int64_t>(slots.size()),
                       kd.as<const float>(), vd.as<const float>());
      const auto got = to_host<unsigned char>(pool, static_cast<int64_t>(want.bytes.size()));
      const std::string what =
          std::string(kernels::attention_kind_name(v.kind)) + " " + kernels::kv_storage_name(storage);
      if (storage != KvStorage::int8) {
        ASSERT_TRUE(got == want.bytes) << what;
        continue;
      }
      // INT8: 127 / absmax is a float division the device may round differently by an ulp; a
      // quantized element may then differ by one step, and a scale by an ulp.
      for (int64_t b = 0; b < want.blocks; ++b) {
        const int64_t base = (b * want.layers + 1) * want.layer_bytes;
        // Where the scales start (kv_layout.cpp): the elements come before them.
        const auto* region = want.bytes.data() + base;
        const int64_t key_element_bytes =
            reinterpret_cast<const unsigned char*>(kernels::key_scales(want.dims, region)) - region;
        const int64_t value_element_bytes =
            reinterpret_cast<const unsigned char*>(kernels::value_scales(want.dims, region + want.key_bytes)) -
            (region + want.key_bytes);
        for (int64_t i = 0; i < want.layer_bytes; ++i) {
          const int64_t at = base + i;
          const bool key_element = i < key_element_bytes;
          const bool value_element = i >= want.key_bytes && i < want.key_bytes + value_element_bytes;
          if (key_element || value_element) {
            ASSERT_LE(std::abs(static_cast<int8_t>(got[at]) - static_cast<int8_t>(want.bytes[at])), 1)
                << what << " byte " << at;
          } else if (i % 4 == 0 && i + 4 <= want.layer_bytes) {
            float a, c;
            std::memcpy(&a, got.data() + at, 4);
            std::memcpy(&c, want.bytes.data() + at, 4);
            ASSERT_NEAR(a, c, 4e-7 * std::fabs(c)) << what << " scale at " << at << " (region byte " << i << ")";
          }
        }
      }
      const int64_t other = want.layer_bytes;  // layer 0 of block 0: never written
      ASSERT_TRUE(std::all_of(got.begin(), got.begin() + other, [](unsigned char x) { return x == 0; })) << what;
    }
}

// Decode rows: (sequence, length) pairs, several rows of one sequence among them.
struct DecodeRows {
  std::vector<int32_t> lengths, tables, blocks;
  std::vector<int64_t> of;  // the sequence of each row
};

DecodeRows rows_of(const std::vector<Sequence>& seqs, const std::vector<std::pair<int64_t, int64_t>>& rows) {
  DecodeRows r;
  std::vector<int32_t> first;
  for (const Sequence& s : seqs) {
    first.push_back(static_cast<int32_t>(r.blocks.size()));
    r.blocks.insert(r.blocks.end(), s.table.begin(), s.table.end());
  }
  for (auto [seq, length] : rows) {
    r.lengths.push_back(static_cast<int32_t>(length));
    r.tables.push_back(first[seq]);
    r.of.push_back(seq);
  }
  return r;
}

// longest_run: PagedRows' hint, the most rows of one sequence at consecutive positions (the engine
// gives it; 1: every row alone).
std::vector<float> decode_on(VulkanBackend& vk, const HostPool& pool, const DecodeRows& r, const std::vector<float>& q,
                             const std::vector<float>& lambda, int64_t layer, int64_t longest_run = 1) {
  const auto put = [&](const auto& x) {
    const int64_t bytes = static_cast<int64_t>(x.size() * sizeof(x[0]));
    DeviceBuffer b = vk.allocate(std::max<int64_t>(bytes, 4));
    vk.upload(b.as<void>(), x.data(), bytes);
    return b;
  };
  const DeviceBuffer base = put(pool.bytes), lengths = put(r.lengths), tables = put(r.tables), blocks = put(r.blocks);
  const DeviceBuffer qd = put(q), ld = put(lambda);
  const int64_t count = static_cast<int64_t>(r.lengths.size()), ow = pool.dims.out_width();
  const DeviceBuffer out = vk.allocate(count * ow * 4);
  const backends::PagedRows rows{count,
                                 *std::max_element(r.lengths.begin(), r.lengths.end()),
                                 lengths.as<const int32_t>(),
                                 tables.as<const int32_t>(),
                                 blocks.as<const int32_t>(),
                                 longest_run};
  vk.paged_attention(pool.on(base), layer, rows, qd.as<const float>(),
                     pool.dims.kind == AttentionKind::baseline ? nullptr : ld.as<const float>(), out.as<float>());
  std::vector<float> got(count * ow);
  vk.download(got.data(), out.as<const void>(), count * ow * 4);
  return got;
}

// Each row of `got` against the float64 reference over one contiguous cache of its sequence, stored
// from the same rows.
void expect_reference(const HostPool& pool, const std::vector<Sequence>& seqs, const DecodeRows& r,
                      const std::vector<float>& q, const std::vector<float>& lambda, const std::vector<float>& got,
                      const std::string& what) {
  const int64_t qw = pool.dims.attention_dims().q_width(), ow = pool.dims.out_width();
  for (size_t i = 0; i < r.lengths.size(); ++i) {
    const Sequence& s = seqs[r.of[i]];
    kernels::DecodeAttentionDims flat = pool.dims;
    flat.capacity = (s.length + kernels::kKeyTile - 1) / kernels::kKeyTile * kernels::kKeyTile;
    std::vector<unsigned char> keys(kernels::key_region_bytes(flat)), values(kernels::value_region_bytes(flat));
    kernels::store_kv(flat, keys.data(), values.data(), 0, s.length, s.k.data(), s.v.data());
    const bool per_row = pool.dims.lambda_source() == kernels::LambdaSource::token_logits;
    const float* row_lambda = per_row ? lambda.data() + i * pool.dims.H : lambda.data();
    const auto want = decode_attention_reference(flat, r.lengths[i], q.data() + i * qw, keys.data(), values.data(),
                                                 pool.dims.kind == AttentionKind::baseline ? nullptr : row_lambda);
    for (int64_t x = 0; x < ow; ++x)
      ASSERT_NEAR(got[i * ow + x], want[x], 1e-5) << what << " row " << i << " length " << r.lengths[i] << " at " << x;
  }
}

std::vector<float> lambda_for(const HostPool& pool, int64_t rows, Rng& rng) {
  return pool.dims.lambda_source() == kernels::LambdaSource::token_logits
             ? testing::random_vector(rows * pool.dims.H, rng, -2, 2)
             : testing::random_vector(1, rng, 0.2, 0.8);
}

// On this device, and on one that splits rows into chunks as a GPU does (of 32 positions: four
// threads share a key).
TEST_F(VulkanTest, PagedAttentionMatchesReferenceForEveryVariantAndStorage) {
  backends::vulkan::Options gpu_chunks;
  gpu_chunks.decode_min_chunk = 32;
  const auto other_device = open_another(gpu_chunks);
  Rng rng(42);
  for (VulkanBackend* device : {&vk(), other_device.get()})
    for (const Variant& v : kVariants)
      for (KvStorage storage : {KvStorage::f32, KvStorage::bf16, KvStorage::int8}) {
        const int64_t d = storage == KvStorage::bf16 ? 24 : 16, P = 16;  // 24: no power of two
        HostPool pool(v, d, P, storage, 2, 60);
        const auto seqs = fill(pool, {1, 37, 600, 20}, 1, rng);
        // Rows: short ones, a prefill-like run of one sequence, and one over 19 chunks of 32 (5 of 128).
        const DecodeRows r = rows_of(seqs, {{0, 1}, {1, 37}, {2, 600}, {2, 257}, {2, 256}, {3, 20}, {1, 5}});
        const int64_t count = static_cast<int64_t>(r.lengths.size());
        const auto q = testing::random_vector(count * pool.dims.attention_dims().q_width(), rng, -3, 3);
        const auto lambda = lambda_for(pool, count, rng);
        expect_reference(pool, seqs, r, q, lambda, decode_on(*device, pool, r, q, lambda, 1),
                         std::string(kernels::attention_kind_name(v.kind)) + " " + kernels::kv_storage_name(storage) +
                             " chunks from " + std::to_string(device->context().caps().decode_min_chunk));
      }
  expect_no_validation_messages(*other_device);
}

// A row's chunks grow with its length (on a GPU 32 positions while 64 chunks cover it, then 64,
// 128, 256: two passes of the workgroup's 128 positions each; 4 and 2 threads share a key below
// 128): rows on either side of each step match the reference, and a run of one sequence's rows
// across a step keeps each row's bits (the rows of either size form their own groups); windowed,
// the window's span sets the chunk. On a device that splits as a GPU does, whatever this one is.
TEST_F(VulkanTest, PagedAttentionChunksFollowTheRowLength) {
  backends::vulkan::Options gpu_chunks;
  gpu_chunks.decode_min_chunk = 32;
  const auto device = open_another(gpu_chunks);
  VulkanBackend& gpu = *device;
  ASSERT_EQ(gpu.context().caps().decode_min_chunk, 32);
  Rng rng(49);
  const std::tuple<Variant, KvStorage, int64_t> cases[] = {
      {kVariants[1], KvStorage::bf16, 0}, {kVariants[0], KvStorage::int8, 0}, {kVariants[2], KvStorage::f32, 100}};
  for (const auto& [v, storage, window] : cases) {
    HostPool pool(v, 16, 16, storage, 1, 520);
    pool.dims.window = window;
    const auto seqs = fill(pool, {8200}, 0, rng);
    std::vector<std::pair<int64_t, int64_t>> order;
    for (int64_t n : {2049, 4097, 8193, 8200}) order.push_back({0, n});
    for (int64_t n = 2044; n <= 2052; ++n) order.push_back({0, n});
    const int64_t count = static_cast<int64_t>(order.size()), qw = pool.dims.attention_dims().q_width();
    const auto q = testing::random_vector(count * qw, rng, -3, 3);
    const auto lambda = lambda_for(pool, count, rng);
    const DecodeRows r = rows_of(seqs, order);
    const std::string what = std::string(kernels::attention_kind_name(v.kind)) + " " +
                             kernels::kv_storage_name(storage) + " window " + std::to_string(window);
    const auto grouped = decode_on(gpu, pool, r, q, lambda, 0, 9);
    expect_reference(pool, seqs, r, q, lambda, grouped, what);
    const int64_t ow = pool.dims.out_width();
    for (int64_t i = 4; i < count; ++i) {  // the run's rows, each alone
      const DecodeRows one = rows_of(seqs, {order[i]});
      const std::vector<float> q_one(q.begin() + i * qw, q.begin() + (i + 1) * qw);
      const bool per_row = pool.dims.lambda_source() == kernels::LambdaSource::token_logits;
      const std::vector<float> lambda_one =
          per_row ? std::vector<float>(lambda.begin() + i * v.H, lambda.begin() + (i + 1) * v.H) : lambda;
      const auto alone = decode_on(gpu, pool, one, q_one, lambda_one, 0);
      for (int64_t x = 0; x < ow; ++x)
        ASSERT_EQ(grouped[i * ow + x], alone[x]) << what << " length " << order[i].second << " at " << x;
    }
  }
  expect_no_validation_messages(gpu);
}

// Row 2 (600 positions) alone and among six others: the same bits.
TEST_F(VulkanTest, PagedAttentionRowsHaveTheirOwnBits) {
  Rng rng(43);
  for (const Variant& v : {kVariants[1], kVariants[2]}) {
    HostPool pool(v, 16, 16, KvStorage::bf16, 1, 60);
    const auto seqs = fill(pool, {1, 37, 600, 20}, 0, rng);
    const DecodeRows all = rows_of(seqs, {{0, 1}, {1, 37}, {2, 600}, {3, 20}, {2, 300}});
    const DecodeRows one = rows_of(seqs, {{2, 600}});
    const int64_t qw = pool.dims.attention_dims().q_width(), ow = pool.dims.out_width();
    const auto q = testing::random_vector(5 * qw, rng, -3, 3);
    const auto lambda = testing::random_vector(5 * v.H, rng, -2, 2);
    const auto batch = decode_on(vk(), pool, all, q, lambda, 0);
    const std::vector<float> q_one(q.begin() + 2 * qw, q.begin() + 3 * qw);
    const std::vector<float> lambda_one = pool.dims.lambda_source() == kernels::LambdaSource::token_logits
                                              ? std::vector<float>(lambda.begin() + 2 * v.H, lambda.begin() + 3 * v.H)
                                              : lambda;
    const auto alone = decode_on(vk(), pool, one, q_one, lambda_one, 0);
    for (int64_t x = 0; x < ow; ++x)
      ASSERT_EQ(batch[2 * ow + x], alone[x]) << kernels::attention_kind_name(v.kind) << " " << x;
  }
}

// A row whose table runs past the block list's allocation reads block 0 for the entries beyond it (the binding ends
// there): a list of exactly 64 entries (256 bytes, no rounding), the row's table its last entry.
TEST_F(VulkanTest, PagedAttentionReadsBlockZeroPastTheBlockList) {
  Rng rng(48);
  const Variant v = kVariants[1];
  HostPool pool(v, 16, 16, KvStorage::f32, 1, 4);
  const auto seqs = fill(pool, {37}, 0, rng);  // blocks 3, 0, 1; block 2 NaN
  DecodeRows r = rows_of(seqs, {{0, 20}});
  r.blocks.assign(64, 2);
  r.blocks[63] = seqs[0].table[0];
  r.tables = {63};
  const auto q = testing::random_vector(pool.dims.attention_dims().q_width(), rng, -3, 3);
  const auto got = decode_on(vk(), pool, r, q, {0.5f}, 0);
  r.blocks.push_back(0);  // the entry past the list as block 0
  const auto want = decode_on(vk(), pool, r, q, {0.5f}, 0);
  ASSERT_TRUE(std::none_of(want.begin(), want.end(), [](float x) { return std::isnan(x); }));
  EXPECT_EQ(got, want);
}

// Prompt rows (a sequence's consecutive positions) share a workgroup's loads in groups; each row
// keeps the bits it has alone. The same rows in reverse order, where no row continues the one
// before it (every row a group of its own), give the same bits: runs of one sequence that cross
// split-K chunks (256) and passes (128), that start off a group boundary, beside other sequences'
// rows; with and without a sliding window (of 1: the rows' windows start in two chunks, the
// group's extra one), every variant and storage, value widths that divide the workgroup (its
// threads share each value's load) and one that does not (24) (in eight cases: lavapipe is slow).
// A row alone loads its values once for all its maps on a GPU, once per map on a CPU device: both
// ways give those bits too.
TEST_F(VulkanTest, PagedAttentionPromptRowsKeepTheirBitsInGroups) {
  backends::vulkan::Options other_loads;
  other_loads.shared_value_loads = !vk().context().caps().shared_value_loads;
  const auto other_device = open_another(other_loads);
  VulkanBackend& other = *other_device;
  ASSERT_NE(other.context().caps().shared_value_loads, vk().context().caps().shared_value_loads);
  Rng rng(47);
  const std::tuple<Variant, KvStorage, int64_t, int64_t> cases[] = {  // variant, storage, window, d
      {kVariants[0], KvStorage::f32, 0, 16},   {kVariants[0], KvStorage::int8, 100, 16},
      {kVariants[1], KvStorage::bf16, 0, 16},  {kVariants[1], KvStorage::f32, 100, 16},
      {kVariants[2], KvStorage::int8, 0, 16},  {kVariants[3], KvStorage::bf16, 100, 16},
      {kVariants[2], KvStorage::bf16, 1, 16},  {kVariants[0], KvStorage::int8, 0, 24}};
  for (const auto& [v, storage, window, d] : cases) {
    HostPool pool(v, d, 16, storage, 1, 40);
    pool.dims.window = window;
    const auto seqs = fill(pool, {300, 40, 20}, 0, rng);
    std::vector<std::pair<int64_t, int64_t>> order{{1, 40}};
    for (int64_t n = 231; n <= 270; ++n) order.push_back({0, n});
    order.push_back({2, 20});
    for (int64_t n = 35; n <= 39; ++n) order.push_back({1, n});
    for (int64_t n = 271; n <= 300; ++n) order.push_back({0, n});
    std::vector<std::pair<int64_t, int64_t>> reversed(order.rbegin(), order.rend());
    const int64_t count = static_cast<int64_t>(order.size());
    const int64_t qw = pool.dims.attention_dims().q_width(), ow = pool.dims.out_width();
    const auto q = testing::random_vector(count * qw, rng, -3, 3);
    const bool lambda_per_row = pool.dims.lambda_source() == kernels::LambdaSource::token_logits;
    const auto lambda = lambda_per_row ? testing::random_vector(count * v.H, rng, -2, 2)
                                       : testing::random_vector(1, rng, 0.2, 0.8);
    const auto reversed_rows = [count](const std::vector<float>& x, int64_t width) {  // `width` floats a row
      std::vector<float> out;
      for (int64_t i = count - 1; i >= 0; --i) out.insert(out.end(), x.begin() + i * width, x.begin() + (i + 1) * width);
      return out;
    };
    const auto grouped = decode_on(vk(), pool, rows_of(seqs, order), q, lambda, 0, 40);
    const auto alone_on = [&](VulkanBackend& device) {
      return decode_on(device, pool, rows_of(seqs, reversed), reversed_rows(q, qw),
                       lambda_per_row ? reversed_rows(lambda, v.H) : lambda, 0);
    };
    const auto alone = alone_on(vk()), alone_other_loads = alone_on(other);
    for (int64_t i = 0; i < count; ++i)
      for (int64_t x = 0; x < ow; ++x) {
        const std::string what = std::string(kernels::attention_kind_name(v.kind)) + " " +
                                 kernels::kv_storage_name(storage) + " window " + std::to_string(window) + " row " +
                                 std::to_string(i) + " (length " + std::to_string(order[i].second) + ") at " +
                                 std::to_string(x);
        ASSERT_EQ(grouped[i * ow + x], alone[(count - 1 - i) * ow + x]) << what;
        ASSERT_EQ(alone_other_loads[(count - 1 - i) * ow + x], alone[(count - 1 - i) * ow + x]) << what;
      }
  }
  expect_no_validation_messages(other);
}

// A backend that binds at most 4 KiB cuts the pool into windows and the prefill into single
// sequences: the same bits as the whole.
TEST_F(VulkanTest, AttentionOverSmallBindingsGivesTheSameBits) {
  const auto small_bindings = open_small_bindings();
  VulkanBackend& small = *small_bindings;
  Rng rng(44);
  const Variant v{AttentionKind::baseline, 2, 1, 1};
  HostPool pool(v, 8, 16, KvStorage::f32, 2, 6);  // 12 regions of 1088 bytes, 3 a window: 4 windows
  const auto seqs = fill(pool, {40, 33}, 1, rng);
  const DecodeRows r = rows_of(seqs, {{0, 40}, {1, 33}, {0, 17}});
  const auto q = testing::random_vector(3 * pool.dims.attention_dims().q_width(), rng, -3, 3);
  EXPECT_EQ(decode_on(vk(), pool, r, q, {0.5f}, 1), decode_on(small, pool, r, q, {0.5f}, 1));
  const PrefillCase c = PrefillCase::random({AttentionKind::diff, 2, 1, 1}, 3, 7, 16, 45);  // a sequence per binding
  EXPECT_EQ(prefill_on(vk(), c), prefill_on(small, c));
  // A pool that needs more than 8 windows is refused, saying so and naming the options that size
  // it as the caller writes them (the library's fields by default, the CLI's flags).
  HostPool big(v, 8, 16, KvStorage::f32, 2, 20);  // 14 windows
  const std::string error = testing::error_of([&] {
    decode_on(small, big, rows_of(fill(big, {40}, 1, rng), {{0, 40}}), q, {0.5f}, 1);
  });
  EXPECT_NE(error.find("needs 14 bindings"), std::string::npos) << error;
  EXPECT_NE(error.find("fewer with kv_tokens or kv_bytes"), std::string::npos) << error;
  const DeviceBuffer big_pool = small.allocate(static_cast<int64_t>(big.bytes.size())), row = small.allocate(256);
  backends::PagedKv flagged = big.on(big_pool);
  flagged.spelling = OptionSpelling::flag;
  const std::string cli = testing::error_of([&] {
    small.paged_store(flagged, 1, row.as<const int32_t>(), 1, row.as<const float>(), row.as<const float>());
  });
  EXPECT_NE(cli.find("fewer with --kv-tokens or --kv-bytes"), std::string::npos) << cli;
  expect_no_validation_messages(small);
}

}  // namespace
}  // namespace difftx
