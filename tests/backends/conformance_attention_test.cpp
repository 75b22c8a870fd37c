// The conformance suite, attention: the fused forward and backward of every variant over a batch's
// own keys and values, the fake-quantized forward, and the engine's paged KV cache (its store and
// the single-query attention over block tables) for every KV storage, on every backend against
// the double references.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/decode_attention.h"
#include "reference/attention_reference.h"
#include "reference/decode_attention_reference.h"
#include "support/backend_case.h"
#include "support/testing.h"

namespace difftx::testing {

using kernels::AttentionKind;

namespace {

class ConformanceAttention : public Conformance {
 protected:
  // A pool of 4 blocks of 16 positions (one layer, F32) in the middle third of an allocation whose other bytes are
  // 0xFF (NaN in F32): a sequence of 37 positions in blocks {2, 1, 3}, block 0 another's 16. What a call reads or
  // writes outside the pool shows.
  struct GuardedPool {
    kernels::DecodeAttentionDims dims;
    int64_t key_bytes = 0, layer_bytes = 0, bytes = 0;
    backends::DeviceBuffer all{};
    backends::PagedKv kv() const { return {dims, all.as<unsigned char>() + bytes, 1, layer_bytes, key_bytes, 4}; }
  };
  static inline const kernels::AttentionVariant kGuarded{AttentionKind::diff, 2, 1, 16};
  GuardedPool guarded_pool(Rng& rng, int64_t window) const {
    GuardedPool g{{kGuarded, 16, kernels::KvStorage::f32}};
    g.dims.window = window;
    g.key_bytes = kernels::key_region_bytes(g.dims);
    g.layer_bytes = g.key_bytes + kernels::value_region_bytes(g.dims);
    g.bytes = 4 * g.layer_bytes;
    const std::vector<unsigned char> nan(3 * g.bytes, 0xFF);
    g.all = backend().allocate(3 * g.bytes, false);
    backend().upload(g.all.as<void>(), nan.data(), 3 * g.bytes);
    std::vector<int32_t> slots;
    for (int64_t t = 0; t < 37; ++t) slots.push_back(static_cast<int32_t>(std::array{2, 1, 3}[t / 16] * 16 + t % 16));
    for (int32_t t = 0; t < 16; ++t) slots.push_back(t);
    const auto n = static_cast<int64_t>(slots.size());
    backend().paged_store(g.kv(), 0, on_device(slots), n, on_device(random_vector(n * kGuarded.k_width(), rng)),
                          on_device(random_vector(n * kGuarded.v_width(), rng)));
    return g;
  }
  // Paged attention of rows (lengths, tables) over `blocks`, its output (and error).
  std::vector<float> attend(const GuardedPool& g, const std::vector<int32_t>& lengths,
                            const std::vector<int32_t>& tables, const std::vector<int32_t>& blocks, int64_t max_length,
                            const std::vector<float>& q, std::string* error = nullptr) const {
    const auto R = static_cast<int64_t>(lengths.size());
    const auto dl = on_device(lengths), dt = on_device(tables), db = on_device(blocks);
    const auto dq = on_device(q), lambda = on_device(std::vector<float>{0.3f});
    auto out = zeros<float>(R * kGuarded.out_width());
    const backends::PagedRows rows{R, max_length, dl, dt, db};
    const std::string e = error_of([&] { backend().paged_attention(g.kv(), 0, rows, dq, lambda, out); });
    if (error) *error = e;
    else EXPECT_EQ(e, "(no error)");
    return out.read();
  }
};

bool all_nan(const std::vector<float>& x, size_t from, size_t to) {
  return std::all_of(x.begin() + from, x.begin() + to, [](float v) { return std::isnan(v); });
}

const kernels::AttentionDims kShapes[] = {
    {AttentionKind::baseline, 1, 1, 2, 1, 32},   {AttentionKind::baseline, 2, 65, 4, 2, 64},
    {AttentionKind::diff, 1, 63, 2, 1, 32},      {AttentionKind::diff, 2, 100, 4, 4, 16},
    {AttentionKind::diff2, 1, 70, 4, 2, 24},     {AttentionKind::diff2, 1, 129, 2, 1, 64},
    {AttentionKind::diff_grouped, 1, 65, 4, 2, 32, 2}, {AttentionKind::diff_grouped, 2, 33, 8, 1, 16, 4}};

std::string describe(const kernels::AttentionDims& a) {
  return std::string(kernels::attention_kind_name(a.kind)) + " B=" + std::to_string(a.B) + " T=" + std::to_string(a.T) +
         " H=" + std::to_string(a.H) + " Hkv=" + std::to_string(a.Hkv) + " d=" + std::to_string(a.d) +
         " r=" + std::to_string(a.r);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                  const std::string& what) {
  std::string mismatch;
  EXPECT_TRUE(all_close(got, want, atol, rtol, &mismatch)) << what << ": " << mismatch;
}

TEST_P(ConformanceAttention, FusedForwardAndBackwardMatchTheReference) {
  Rng rng(31);
  for (const kernels::AttentionDims& a : kShapes) {
    const int64_t N = a.B * a.T;
    const auto q = random_vector(N * a.q_width(), rng, -3, 3), k = random_vector(N * a.k_width(), rng);
    const auto v = random_vector(N * a.v_width(), rng), dout = random_vector(N * a.out_width(), rng);
    const auto lambda = random_lambda(a.variant(), N, rng);
    const float* lam = lambda.empty() ? nullptr : lambda.data();
    std::vector<float> want(N * a.out_width());
    attention_forward_reference(a, q.data(), k.data(), v.data(), lam, want.data());
    const auto dq = on_device(q), dk = on_device(k), dv = on_device(v), dl = on_device(lambda);
    const backends::DevicePtr<const float> dlam = lambda.empty() ? nullptr : dl.ptr();
    auto out = zeros<float>(N * a.out_width()), lse = zeros<float>(kernels::attention_lse_floats(a));
    auto maps = zeros<float>(kernels::attention_maps_out_floats(a));
    const backends::DeviceAttentionSaved saved{lse, a.variant().paired() ? maps.ptr() : nullptr};
    backend().attention_forward(a, dq, dk, dv, dlam, out, saved);
    expect_close(out.read(), want, 1e-5, 1e-4, "out " + describe(a));
    if (!backend().trains()) continue;
    std::vector<float> rq(q.size()), rk(k.size()), rv(v.size()), rl(lambda.size());
    attention_backward_reference(a, q.data(), k.data(), v.data(), lam, dout.data(), rq.data(), rk.data(), rv.data(),
                                 rl.empty() ? nullptr : rl.data());
    auto gq = zeros<float>(q.size()), gk = zeros<float>(k.size()), gv = zeros<float>(v.size());
    auto gl = zeros<float>(lambda.size());
    backend().attention_backward(a, dq, dk, dv, dlam, out, saved, on_device(dout), gq, gk, gv,
                                 lambda.empty() ? nullptr : gl.ptr());
    expect_close(gq.read(), rq, 5e-5, 1e-4, "dq " + describe(a));
    expect_close(gk.read(), rk, 5e-5, 1e-4, "dk " + describe(a));
    expect_close(gv.read(), rv, 5e-5, 1e-4, "dv " + describe(a));
    if (!lambda.empty()) expect_close(gl.read(), rl, 1e-4, 1e-4, "dlambda " + describe(a));
  }
}

TEST_P(ConformanceAttention, QuantizedLogitsMatchTheReference) {
  if (!backend().trains()) GTEST_SKIP() << GetParam().name << " runs no analyses";
  Rng rng(32);
  for (const kernels::AttentionDims& a : {kShapes[1], kShapes[3], kShapes[4], kShapes[6]})
    for (int bits : {4, 8}) {
      const int64_t N = a.B * a.T;
      // Products exact in float (multiples of 1/8 times small integers), so both sides see the same levels.
      std::vector<float> q(N * a.q_width()), k(N * a.k_width());
      for (auto& x : q) x = static_cast<float>(static_cast<int64_t>(rng.below(17)) - 8) / 8.0f;
      for (auto& x : k) x = static_cast<float>(static_cast<int64_t>(rng.below(17)) - 8) / 8.0f;
      const auto v = random_vector(N * a.v_width(), rng);
      const auto lambda = random_lambda(a.variant(), N, rng);
      std::vector<float> want(N * a.out_width());
      attention_forward_quantized_reference(a, q.data(), k.data(), v.data(), lambda.empty() ? nullptr : lambda.data(),
                                            want.data(), bits);
      auto out = zeros<float>(want.size());
      const auto dl = on_device(lambda);
      backend().attention_forward_quantized(a, on_device(q), on_device(k), on_device(v),
                                            lambda.empty() ? nullptr : dl.ptr(), out, bits);
      expect_close(out.read(), want, 1e-5, 1e-4, "bits=" + std::to_string(bits) + " " + describe(a));
    }
}

// A paged cache of 8 blocks of 16 positions and 2 layers; three sequences whose block tables
// are scattered over the pool, stored a row at a time and all at once, then every row of a step
// (prompt rows of one sequence, the next token of the others) attends to its positions. DIFF V1's
// head width (12) is no multiple of the GPU's loads in flight (8): its keys' last elements apart.
TEST_P(ConformanceAttention, PagedStoreAndAttentionOverBlockTables) {
  Rng rng(33);
  const kernels::AttentionVariant variants[] = {{AttentionKind::baseline, 4, 2, 32},
                                                {AttentionKind::diff, 2, 1, 12},
                                                {AttentionKind::diff2, 4, 2, 32},
                                                {AttentionKind::diff_grouped, 4, 1, 16, 2}};
  for (const kernels::AttentionVariant& variant : variants)
    for (kernels::KvStorage storage : {kernels::KvStorage::f32, kernels::KvStorage::bf16, kernels::KvStorage::int8}) {
      const int64_t P = 16, blocks = 8, layers = 2, layer = 1;
      const kernels::DecodeAttentionDims block{variant, P, storage};
      const int64_t key_bytes = kernels::key_region_bytes(block);
      const int64_t layer_bytes = key_bytes + kernels::value_region_bytes(block);
      const backends::DeviceBuffer pool = backend().allocate(blocks * layers * layer_bytes, true);
      const backends::PagedKv kv{block, pool.as<unsigned char>(), layers, layer_bytes, key_bytes, blocks};
      const std::vector<std::vector<int32_t>> tables = {{5, 1, 6}, {0}, {3, 7}};
      const std::vector<int64_t> lengths = {37, 9, 20};  // tokens each sequence holds
      // Every sequence's keys and values, token-major, and where each token goes.
      std::vector<std::vector<float>> ks, vs;
      std::vector<int32_t> slots;
      std::vector<float> k_rows, v_rows;
      for (size_t s = 0; s < tables.size(); ++s) {
        ks.push_back(random_vector(lengths[s] * variant.k_width(), rng));
        vs.push_back(random_vector(lengths[s] * variant.v_width(), rng));
        for (int64_t t = 0; t < lengths[s]; ++t) slots.push_back(static_cast<int32_t>(tables[s][t / P] * P + t % P));
        k_rows.insert(k_rows.end(), ks[s].begin(), ks[s].end());
        v_rows.insert(v_rows.end(), vs[s].begin(), vs[s].end());
      }
      backend().paged_store(kv, layer, on_device(slots), static_cast<int64_t>(slots.size()), on_device(k_rows),
                            on_device(v_rows));
      // The step: sequence 0's last 5 positions as prompt rows, the last position of the others.
      std::vector<int32_t> row_lengths, row_tables, all_blocks;
      std::vector<size_t> row_sequence;
      std::vector<int32_t> starts;
      for (const auto& t : tables) starts.push_back(static_cast<int32_t>(all_blocks.size())), all_blocks.insert(all_blocks.end(), t.begin(), t.end());
      for (int64_t p = lengths[0] - 5; p < lengths[0]; ++p)
        row_lengths.push_back(static_cast<int32_t>(p + 1)), row_tables.push_back(starts[0]), row_sequence.push_back(0);
      for (size_t s = 1; s < tables.size(); ++s)
        row_lengths.push_back(static_cast<int32_t>(lengths[s])), row_tables.push_back(starts[s]), row_sequence.push_back(s);
      const auto R = static_cast<int64_t>(row_lengths.size());
      const auto q = random_vector(R * variant.q_width(), rng, -3, 3);
      const auto lambda = random_lambda(variant, R, rng);
      const auto dlengths = on_device(row_lengths), dtables = on_device(row_tables), dblocks = on_device(all_blocks);
      const backends::PagedRows rows{R, *std::max_element(row_lengths.begin(), row_lengths.end()), dlengths, dtables,
                                     dblocks};
      auto out = zeros<float>(R * variant.out_width());
      const auto dl = on_device(lambda);
      backend().paged_attention(kv, layer, rows, on_device(q), lambda.empty() ? nullptr : dl.ptr(), out);
      const auto got = out.read();
      // Each row against the reference over a contiguous cache the host writes with store_kv.
      for (int64_t i = 0; i < R; ++i) {
        const size_t s = row_sequence[i];
        const kernels::DecodeAttentionDims whole{variant, lengths[s], storage};
        std::vector<unsigned char> keys(kernels::key_region_bytes(whole)), values(kernels::value_region_bytes(whole));
        kernels::store_kv(whole, keys.data(), values.data(), 0, lengths[s], ks[s].data(), vs[s].data());
        const float* row_lambda = variant.lambda_source() == kernels::LambdaSource::token_logits
                                      ? lambda.data() + i * variant.H
                                  : lambda.empty() ? nullptr
                                                   : lambda.data();
        const auto want = decode_attention_reference(whole, row_lengths[i], q.data() + i * variant.q_width(),
                                                     keys.data(), values.data(), row_lambda);
        for (int64_t x = 0; x < variant.out_width(); ++x)
          ASSERT_NEAR(got[i * variant.out_width() + x], want[x], 2e-5)
              << kernels::attention_kind_name(variant.kind) << " " << kernels::kv_storage_name(storage) << " row " << i << " column " << x;
      }
    }
}

// A slot outside the pool (the first block past it, negative, the int32 extremes) is an error naming it on a backend
// that reads the slots on the host (the CPU); a device, which cannot, stores the other rows as alone. Neither writes
// outside the pool.
TEST_P(ConformanceAttention, PagedStoreNeverWritesOutsideThePool) {
  Rng rng(34);
  const kernels::AttentionVariant variant{AttentionKind::diff, 2, 1, 16};
  for (kernels::KvStorage storage : {kernels::KvStorage::f32, kernels::KvStorage::int8})
    for (int32_t slot : {48, 63, -1, INT32_MIN, INT32_MAX}) {
      const int64_t P = 16, blocks = 3, layers = 2, layer = 1;
      const kernels::DecodeAttentionDims block{variant, P, storage};
      const int64_t key_bytes = kernels::key_region_bytes(block);
      const int64_t layer_bytes = key_bytes + kernels::value_region_bytes(block), bytes = blocks * layers * layer_bytes;
      const std::vector<unsigned char> pattern(3 * bytes, 0xA5);
      const auto k = on_device(random_vector(2 * variant.k_width(), rng));
      const auto v = on_device(random_vector(2 * variant.v_width(), rng));
      const auto slots = on_device(std::vector<int32_t>{P + 3, slot});
      // The pool in the middle third of the allocation: row 0 at a valid slot, row 1 (rows = 2) at `slot`.
      const auto store = [&](int64_t rows, std::string* error) {
        const auto all = on_device(pattern);
        const backends::PagedKv kv{block, all.ptr() + bytes, layers, layer_bytes, key_bytes, blocks};
        *error = error_of([&] { backend().paged_store(kv, layer, slots, rows, k, v); });
        return all.read();
      };
      std::string error, none;
      const std::vector<unsigned char> got = store(2, &error), alone = store(1, &none);
      const std::string what = std::string(kernels::kv_storage_name(storage)) + " slot " + std::to_string(slot);
      ASSERT_EQ(none, "(no error)") << what;
      EXPECT_TRUE(std::equal(pattern.begin(), pattern.begin() + bytes, got.begin())) << what << ": before the pool";
      EXPECT_TRUE(std::equal(pattern.begin() + 2 * bytes, pattern.end(), got.begin() + 2 * bytes))
          << what << ": after the pool";
      if (backend().host_memory()) {
        EXPECT_NE(error.find("slot " + std::to_string(slot) + " is outside the pool's 3 blocks"), std::string::npos)
            << error;
      } else {
        EXPECT_EQ(error, "(no error)") << what;
        EXPECT_TRUE(got == alone) << what;
      }
    }
}

// A block entry a row reads outside the pool is an error naming it on the CPU; a device reads block 0 in its place,
// never outside the pool. An entry before a sliding window's first position is not read: -1 there (a block given
// back) is neither.
TEST_P(ConformanceAttention, PagedAttentionBlockEntriesOutsideThePool) {
  Rng rng(35);
  const GuardedPool pool = guarded_pool(rng, 0);
  const auto q = random_vector(kGuarded.q_width(), rng, -3, 3);
  const auto block_zero = attend(pool, {37}, {0}, {2, 0, 3}, 37, q);
  ASSERT_TRUE(std::none_of(block_zero.begin(), block_zero.end(), [](float v) { return std::isnan(v); }));
  for (int32_t entry : {4, -1, INT32_MAX}) {
    std::string error;
    const auto got = attend(pool, {37}, {0}, {2, entry, 3}, 37, q, &error);
    if (backend().host_memory()) {
      EXPECT_NE(error.find("block entry 1 (row 0's block 1) is " + std::to_string(entry) + ", outside the pool's 4"),
                std::string::npos)
          << error;
    } else {
      EXPECT_EQ(error, "(no error)") << "entry " << entry;
      EXPECT_EQ(got, block_zero) << "entry " << entry;
    }
  }
  if (!backend().runs_hybrid()) return;  // a sliding window is refused by name
  const GuardedPool windowed = guarded_pool(rng, 16);  // a row of 37 reads positions [21, 37): entries 1 and 2
  EXPECT_EQ(attend(windowed, {37}, {0}, {-1, 1, 3}, 37, q), attend(windowed, {37}, {0}, {2, 1, 3}, 37, q));
}

// A row whose length is outside [1, max_length] (0, negative, longer than the longest the call was given) is an
// error naming it on the CPU; a device writes it as NaN and the other rows as alone.
TEST_P(ConformanceAttention, PagedAttentionRowLengthsOutsideTheirBound) {
  Rng rng(36);
  const GuardedPool pool = guarded_pool(rng, 0);
  const auto q = random_vector(2 * kGuarded.q_width(), rng, -3, 3);
  const auto alone = attend(pool, {20}, {0}, {2, 1, 3}, 20, {q.begin(), q.begin() + kGuarded.q_width()});
  const auto ow = static_cast<size_t>(kGuarded.out_width());
  for (int32_t length : {0, -3, 21, 1000}) {
    std::string error;
    const auto got = attend(pool, {20, length}, {0, 0}, {2, 1, 3}, 20, q, &error);
    if (backend().host_memory()) {
      EXPECT_NE(error.find("row 1's length " + std::to_string(length) + " is outside [1, 20]"), std::string::npos)
          << error;
    } else {
      EXPECT_EQ(error, "(no error)") << "length " << length;
      EXPECT_TRUE(std::equal(alone.begin(), alone.end(), got.begin())) << "length " << length;
      EXPECT_TRUE(all_nan(got, ow, 2 * ow)) << "length " << length;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ConformanceAttention, ::testing::ValuesIn(backends_under_test()),
                         backend_test_name);

}  // namespace
}  // namespace difftx::testing
