// The Vulkan products and embedding against the double references (matmul_reference, the
// dequantized rows) for every weight type, on awkward shapes (one row, odd widths, rows of BF16
// and of Q8_0/Q4_0 blocks that start 2 mod 4), both orders, overwrite and accumulate; each
// row's bits the same alone or among others (batch invariance); the cooperative-matrix GEMM's x
// to about 22 bits; and the same results when the operands are cut into windows of a few
// kilobytes, as a matrix larger than one binding is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/vulkan/vulkan_backend.h"
#include "io/float16.h"
#include "kernels/quant/matmul.h"
#include "reference/matmul_reference.h"
#include "support/quant_weights.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {

using kernels::MatmulOrder;
using kernels::WeightType;

namespace {

using backends::DeviceBuffer;
using backends::DeviceMatrix;
using backends::vulkan::VulkanBackend;
using testing::Quantized;
using testing::VulkanTest;

// A shape and where its bytes start in their allocation: 4 puts the rows off 16-byte alignment
// (the GEMV's "u" variants), 0 with rows of whole 16 bytes (cols 200 and 204 in F32, 200 in BF16
// and F16; a Q4_K row is 144 bytes a super-block) the aligned ones, which read the weights 16
// bytes at a time (F32 at 204 columns ends in a partial unit). Q8_0 and Q4_0 read words wherever
// their rows start: their variant follows x alone.
struct Shape {
  int64_t rows, cols, offset;
};

std::vector<Shape> shapes_for(WeightType type) {
  switch (type) {
    case WeightType::q4_k: return {{1, 256, 4}, {33, 512, 0}, {70, 768, 4}};
    case WeightType::q8_0:
    case WeightType::q4_0: return {{1, 32, 4}, {33, 96, 0}, {70, 160, 4}};
    default: return {{1, 7, 4}, {33, 33, 4}, {70, 300, 4}, {20, 200, 0}, {5, 204, 0}};
  }
}

// A matrix on the device, its bytes at `offset` into their allocation.
struct OnDevice {
  DeviceBuffer bytes;
  DeviceMatrix matrix;
};
OnDevice upload(VulkanBackend& vk, const Quantized& q, int64_t offset = 4) {
  OnDevice d{vk.allocate(static_cast<int64_t>(q.bytes.size()) + 8), {}};
  const auto at = backends::device_cast<void>(d.bytes.as<unsigned char>() + offset);
  vk.upload(at, q.bytes.data(), static_cast<int64_t>(q.bytes.size()));
  d.matrix = vk.prepare_matrix({q.type, at, q.rows, q.cols, nullptr}, false, false).matrix;
  return d;
}

// The bound of testing::matmul_tolerance, widened by the GEMM's rounding of its inputs where it
// may run on cooperative matrices.
double bound(VulkanBackend& vk, const Quantized& q, const float* x, int64_t r, bool gemm) {
  using backends::MatmulInputRounding;
  const MatmulInputRounding rounding = gemm ? vk.matmul_input_rounding(q.type) : MatmulInputRounding{};
  return testing::matmul_tolerance(q, x, r, false, rounding) + 1e-6;
}

std::string describe(const Quantized& q, int64_t N, MatmulOrder order, bool accumulate) {
  return std::string(kernels::weight_type_name(q.type)) + " [" + std::to_string(q.rows) + ", " +
         std::to_string(q.cols) + "] N=" + std::to_string(N) + " order=" + std::to_string(static_cast<int>(order)) +
         " accumulate=" + std::to_string(accumulate);
}

// The cases of one shape: each order on both sides of its kernel's step (the GEMV takes 16 rows
// of x at a time, the GEMM tiles of 64), every GEMV variant (1, 2, 4 for 19 = 16 + 3, 8 for 5,
// 16), by_size on both sides of its switch, and accumulate.
struct Case {
  int64_t N;
  MatmulOrder order;
  bool accumulate;
};
const Case kCases[] = {{1, MatmulOrder::gemv, false},    {2, MatmulOrder::gemv, false},
                       {19, MatmulOrder::gemv, true},
                       {1, MatmulOrder::gemm, true},     {70, MatmulOrder::gemm, false},
                       {5, MatmulOrder::by_size, false}, {17, MatmulOrder::by_size, true}};

// Every (shape, case) of one type against the reference.
void expect_matches_reference(VulkanBackend& vk, WeightType type, uint64_t seed) {
  Rng rng(seed);
  for (const Shape& s : shapes_for(type)) {
    const Quantized q = testing::make_weights(type, s.rows, s.cols, rng);
    const OnDevice w = upload(vk, q, s.offset);
    for (const auto& [N, order, accumulate] : kCases) {
      const auto x = testing::random_vector(N * q.cols, rng);
      const auto y0 = testing::random_vector(N * q.rows, rng);
      auto want = y0;
      reference::matmul(q.matrix(), x.data(), want.data(), N, accumulate);
      std::vector<float> got(y0.size());
      {
        const DeviceBuffer xd = vk.allocate(static_cast<int64_t>(x.size()) * 4);
        const DeviceBuffer yd = vk.allocate(static_cast<int64_t>(y0.size()) * 4);
        vk.upload(xd.as<void>(), x.data(), static_cast<int64_t>(x.size()) * 4);
        vk.upload(yd.as<void>(), y0.data(), static_cast<int64_t>(y0.size()) * 4);
        vk.matmul(w.matrix, xd.as<const float>(), yd.as<float>(), N, accumulate, order);
        vk.download(got.data(), yd.as<const void>(), static_cast<int64_t>(got.size()) * 4);
      }
      const bool gemm = order == MatmulOrder::gemm || (order == MatmulOrder::by_size && N >= 8);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t r = 0; r < q.rows; ++r)
          ASSERT_LE(std::fabs(got[n * q.rows + r] - want[n * q.rows + r]),
                    bound(vk, q, x.data() + n * q.cols, r, gemm) + (accumulate ? 1e-6 : 0.0))
              << describe(q, N, order, accumulate) << " n=" << n << " r=" << r;
    }
  }
}

TEST_F(VulkanTest, MatmulMatchesReferenceF32Bf16F16) {
  for (WeightType type : {WeightType::f32, WeightType::bf16, WeightType::f16}) expect_matches_reference(vk(), type, 11);
}

TEST_F(VulkanTest, MatmulMatchesReferenceQ8_0Q4_0Q4_K) {
  for (WeightType type : {WeightType::q8_0, WeightType::q4_0, WeightType::q4_k})
    expect_matches_reference(vk(), type, 12);
}

// A row's bits alone and as row 37 of 70 (the engine's batch invariance), in both orders; alone,
// its x and the weights start off 16-byte alignment, so on the aligned shape the GEMV's aligned
// variant (the batch's) and its "u" variant must agree bit for bit too. The odd-width shape
// covers the float types' partial last unit and BF16 / F16 rows that start 2 mod 4.
TEST_F(VulkanTest, EachRowHasItsOwnBitsWhateverTheBatch) {
  Rng rng(13);
  for (WeightType type : testing::kWeightTypes) {
    const auto shapes = shapes_for(type);
    const Shape aligned = *std::find_if(shapes.begin(), shapes.end(), [](const Shape& t) { return t.offset == 0; });
    for (const Shape& s : {aligned, shapes[1]}) {
      const Quantized q = testing::make_weights(type, s.rows, s.cols, rng);
      const OnDevice w = upload(vk(), q, s.offset), w_off = upload(vk(), q, 4);
      const int64_t N = 70, row = 37;
      const auto x = testing::random_vector(N * q.cols, rng);
      const DeviceBuffer xd = to_device(x);
      const DeviceBuffer alone = vk().allocate(q.cols * 4 + 12);  // the row at another offset and alignment
      const auto alone_x = backends::device_cast<void>(alone.as<float>() + 3);
      vk().upload(alone_x, x.data() + row * q.cols, q.cols * 4);
      for (MatmulOrder order : {MatmulOrder::gemv, MatmulOrder::gemm}) {
        const DeviceBuffer batch = vk().allocate(N * q.rows * 4), single = vk().allocate(q.rows * 4);
        vk().matmul(w.matrix, xd.as<const float>(), batch.as<float>(), N, false, order);
        vk().matmul(w_off.matrix, backends::device_cast<const float>(alone_x), single.as<float>(), 1, false, order);
        const auto b = to_host<float>(batch, N * q.rows);
        const auto one = to_host<float>(single, q.rows);
        for (int64_t r = 0; r < q.rows; ++r)
          ASSERT_EQ(b[row * q.rows + r], one[r])
              << kernels::weight_type_name(type) << " order " << static_cast<int>(order) << " r=" << r;
      }
    }
  }
}

// The cooperative-matrix GEMM's tiles, staging and write-out, its fragments emulated (the tensor
// cores' own three operations are tested on a GPU only: bench/gpu/run.sh): every type it takes
// against the reference within the rounding of its F16 inputs (matmul_input_rounding), on shapes
// past one 64 x 128 tile and partial ones, with its columns split and not, and a row's bits alone
// and in a batch.
TEST_F(VulkanTest, CooperativeMatrixGemmWithEmulatedFragmentsMatchesReference) {
  backends::vulkan::Options options;
  options.emulate_cooperative_matrix = true;
  const auto emulated = open_another(options);
  VulkanBackend& em = *emulated;
  ASSERT_EQ(em.prefill_gemm(), VulkanBackend::PrefillGemm::emulated);
  // x as two F16 parts; F16 weights exact, BF16 ones but for F16's subnormals, the others rounded;
  // any weight below F16's normal range maybe flushed.
  const auto rounding = [&](WeightType type) {
    const backends::MatmulInputRounding r = em.matmul_input_rounding(type);
    return std::vector<double>{r.x.relative, r.x.absolute, r.x.flushed_below,
                               r.w.relative, r.w.absolute, r.w.flushed_below};
  };
  EXPECT_EQ(rounding(WeightType::f32), std::vector<double>(6, 0.0));
  EXPECT_EQ(rounding(WeightType::f16), (std::vector<double>{0x1p-22, 0x1p-25, 0, 0, 0, 0x1p-14}));
  EXPECT_EQ(rounding(WeightType::bf16), (std::vector<double>{0x1p-22, 0x1p-25, 0, 0, 0x1p-25, 0x1p-14}));
  for (WeightType type : {WeightType::q8_0, WeightType::q4_0, WeightType::q4_k})
    EXPECT_EQ(rounding(type), (std::vector<double>{0x1p-22, 0x1p-25, 0, 0x1p-11, 0x1p-25, 0x1p-14}));
  EXPECT_EQ(em.matmul_input_rounding(WeightType::f16).terms_per_column, 2);  // hi, then lo
  EXPECT_EQ(em.matmul_input_rounding(WeightType::f16).step_rounding, 0x1p-23);
  Rng rng(16);
  // Every type on a shape of one slice; then narrow matrices (under 4096 rows) whose columns split
  // (ops_matmul.cpp gemm_slices): slices of 1056 and 1044 columns (the last tile partial), three
  // of 1056 and one of 1024, two of 1024.
  struct Matrix {
    WeightType type;
    int64_t cols;
  };
  const Matrix matrices[] = {{WeightType::bf16, 75},   {WeightType::f16, 75},   {WeightType::q8_0, 96},
                             {WeightType::q4_0, 96},   {WeightType::q4_k, 512}, {WeightType::f16, 2100},
                             {WeightType::q8_0, 4192}, {WeightType::q4_k, 2048}};
  for (const auto& [type, cols] : matrices) {
    const Quantized q = testing::make_weights(type, 150, cols, rng);
    const OnDevice w = upload(em, q);
    const int64_t N = 70, row = 66;  // two tiles of x, the second partial; the row in the second
    const auto x = testing::random_vector(N * q.cols, rng);
    for (bool accumulate : {false, true}) {
      const auto y0 = testing::random_vector(N * q.rows, rng);
      auto want = y0;
      reference::matmul(q.matrix(), x.data(), want.data(), N, accumulate);
      const DeviceBuffer xd = em.allocate(N * q.cols * 4), yd = em.allocate(N * q.rows * 4);
      em.upload(xd.as<void>(), x.data(), N * q.cols * 4);
      em.upload(yd.as<void>(), y0.data(), N * q.rows * 4);
      em.matmul(w.matrix, xd.as<const float>(), yd.as<float>(), N, accumulate, MatmulOrder::gemm);
      std::vector<float> got(N * q.rows);
      em.download(got.data(), yd.as<const void>(), N * q.rows * 4);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t r = 0; r < q.rows; ++r)
          ASSERT_LE(std::fabs(got[n * q.rows + r] - want[n * q.rows + r]),
                    bound(em, q, x.data() + n * q.cols, r, true) + (accumulate ? 1e-6 : 0.0))
              << describe(q, N, MatmulOrder::gemm, accumulate) << " n=" << n << " r=" << r;
      if (accumulate) continue;
      const DeviceBuffer alone = em.allocate(q.cols * 4), single = em.allocate(q.rows * 4);
      em.upload(alone.as<void>(), x.data() + row * q.cols, q.cols * 4);
      em.matmul(w.matrix, alone.as<const float>(), single.as<float>(), 1, false, MatmulOrder::gemm);
      std::vector<float> one(q.rows);
      em.download(one.data(), single.as<const void>(), q.rows * 4);
      for (int64_t r = 0; r < q.rows; ++r)
        ASSERT_EQ(got[row * q.rows + r], one[r]) << kernels::weight_type_name(type) << " r=" << r;
    }
  }
  expect_no_validation_messages(em);
}

// The GEMM's x to 22 bits, exactly: matmul_coopmat.comp's two F16 parts, hi = x on F16's normal
// grid (0 below 2^-14) and lo = f16((x - hi) 2^11) 2^-11, rounded to nearest. With one power of two
// in each weight row every product and sum is exact (hi + lo spans at most 24 bits), so
// y = (hi + lo) w bit for bit, on the emulated cooperative matrices and on this device's own GEMM
// (where it has none: the F32 GEMM, y = x w). Rows of x from 2^3 down to 2^-20: hi normal and
// zero. No x - hi is nonzero below 2^-25, where lo would be an F16 subnormal, which Vulkan lets a
// device flush. x as F16 alone, a truncating conversion or a lost lo fail.
TEST_F(VulkanTest, GemmKeepsXToTwentyTwoBits) {
  backends::vulkan::Options options;
  options.emulate_cooperative_matrix = true;
  const auto emulated = open_another(options);
  Rng rng(17);
  const int64_t rows = 130, cols = 48, N = 24;
  std::vector<float> values(rows * cols, 0.0f);
  for (int64_t r = 0; r < rows; ++r) values[r * cols + (r * 7) % cols] = std::ldexp(1.0f, static_cast<int>(r % 5) - 2);
  auto x = testing::random_vector(N * cols, rng);
  const auto f16 = [](float v) { return io::f16_to_float(io::float_to_f16(v)); };
  const auto hi_of = [&](float v) { return std::fabs(v) >= 0x1p-14f ? f16(v) : 0.0f; };
  for (int64_t i = 0; i < N * cols; ++i) {
    x[i] = std::ldexp(x[i], 3 - static_cast<int>(i / cols));
    if (std::fabs(x[i] - hi_of(x[i])) < 0x1p-25f) x[i] = hi_of(x[i]);
  }
  for (VulkanBackend* b : {&vk(), emulated.get()})
    for (WeightType type : {WeightType::f16, WeightType::bf16}) {
      Quantized q{std::vector<unsigned char>(kernels::weight_matrix_bytes(type, rows, cols)), values,
                  std::vector<float>(rows * cols, 0.0f), type, rows, cols};
      backends::cpu::kernels().quantize_rows(type, values.data(), q.bytes.data(), rows, cols);
      const OnDevice w = upload(*b, q);
      const bool parts = b->matmul_input_rounding(type).terms_per_column == 2;
      ASSERT_EQ(parts, b->prefill_gemm() != VulkanBackend::PrefillGemm::plain);
      const DeviceBuffer xd = b->allocate(N * cols * 4), yd = b->allocate(N * rows * 4);
      b->upload(xd.as<void>(), x.data(), N * cols * 4);
      b->matmul(w.matrix, xd.as<const float>(), yd.as<float>(), N, false, MatmulOrder::gemm);
      std::vector<float> got(N * rows);
      b->download(got.data(), yd.as<const void>(), N * rows * 4);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t k = (r * 7) % cols;
          const float xv = x[n * cols + k], hi = hi_of(xv), lo = f16((xv - hi) * 0x1p11f) * 0x1p-11f;
          const float want = (parts ? hi + lo : xv) * values[r * cols + k];
          ASSERT_EQ(got[n * rows + r], want) << (b == &vk() ? "this device's GEMM " : "emulated ")
                                             << kernels::weight_type_name(type) << " x=" << xv << " n=" << n
                                             << " r=" << r;
        }
    }
  expect_no_validation_messages(*emulated);
}

TEST_F(VulkanTest, EmbedWidensEveryTypeExactly) {
  Rng rng(14);
  for (WeightType type : testing::kWeightTypes) {
    const Shape s = shapes_for(type)[2];
    const Quantized q = testing::make_weights(type, s.rows, s.cols, rng);
    const OnDevice e = upload(vk(), q);
    const std::vector<int32_t> ids = {0, 69, 5, 5, 68, 1, 33};
    const DeviceBuffer idd = to_device(ids);
    const DeviceBuffer out = vk().allocate(static_cast<int64_t>(ids.size()) * q.cols * 4);
    vk().embed(e.matrix, idd.as<const int32_t>(), out.as<float>(), static_cast<int64_t>(ids.size()));
    const auto got = to_host<float>(out, static_cast<int64_t>(ids.size()) * q.cols);
    for (size_t i = 0; i < ids.size(); ++i)
      for (int64_t k = 0; k < q.cols; ++k) {
        const float want = q.dequantized[ids[i] * q.cols + k];
        // Q4_K: d s q - dmin m rounds once; the shader may fuse it into one FMA.
        const double tolerance = type == WeightType::q4_k ? 1e-6 * (1 + std::fabs(want)) : 0.0;
        ASSERT_LE(std::fabs(got[i * q.cols + k] - want), tolerance)
            << kernels::weight_type_name(type) << " token " << ids[i] << " column " << k;
      }
  }
}

// Windows: a backend that binds at most 4 KiB at once cuts the weights, x, y and the table into
// many windows; the results are those of the whole (bit for bit: every output is the same sum).
TEST_F(VulkanTest, OperandsLargerThanOneBindingAreCutIntoWindows) {
  const auto small_bindings = open_small_bindings();
  VulkanBackend& small = *small_bindings;
  Rng rng(15);
  for (WeightType type : {WeightType::f32, WeightType::bf16, WeightType::q4_0, WeightType::q4_k}) {
    const Quantized q = testing::make_weights(type, 70, type == WeightType::q4_k ? 512 : 96, rng);
    // Windowed at 16-byte aligned rows (the aligned GEMV in every window), whole off alignment.
    const OnDevice whole = upload(vk(), q), windowed = upload(small, q, 0);
    const int64_t N = 20;
    const auto x = testing::random_vector(N * q.cols, rng);
    for (MatmulOrder order : {MatmulOrder::gemv, MatmulOrder::gemm}) {
      std::vector<float> a(N * q.rows), b(N * q.rows);
      const DeviceBuffer xa = to_device(x), ya = vk().allocate(N * q.rows * 4);
      vk().matmul(whole.matrix, xa.as<const float>(), ya.as<float>(), N, false, order);
      vk().download(a.data(), ya.as<const void>(), N * q.rows * 4);
      const DeviceBuffer xb = small.allocate(N * q.cols * 4), yb = small.allocate(N * q.rows * 4);
      small.upload(xb.as<void>(), x.data(), N * q.cols * 4);
      small.matmul(windowed.matrix, xb.as<const float>(), yb.as<float>(), N, false, order);
      small.download(b.data(), yb.as<const void>(), N * q.rows * 4);
      EXPECT_EQ(a, b) << kernels::weight_type_name(type) << " order " << static_cast<int>(order);
    }
    const std::vector<int32_t> ids = {69, 0, 40, 12};
    const DeviceBuffer ida = to_device(ids), ea = vk().allocate(4 * q.cols * 4);
    const DeviceBuffer idb = small.allocate(16), eb = small.allocate(4 * q.cols * 4);
    small.upload(idb.as<void>(), ids.data(), 16);
    vk().embed(whole.matrix, ida.as<const int32_t>(), ea.as<float>(), 4);
    small.embed(windowed.matrix, idb.as<const int32_t>(), eb.as<float>(), 4);
    std::vector<float> a(4 * q.cols), b(4 * q.cols);
    vk().download(a.data(), ea.as<const void>(), 4 * q.cols * 4);
    small.download(b.data(), eb.as<const void>(), 4 * q.cols * 4);
    EXPECT_EQ(a, b) << kernels::weight_type_name(type) << " embed";
  }
  expect_no_validation_messages(small);
}

}  // namespace
}  // namespace difftx
