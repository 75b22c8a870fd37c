// Row-wise and element-wise ops (kernels/ops.h, kernels/polynorm.h) and DIFF's lambda. Each
// op binds windows of whole rows (or elements) that fit one binding.
#include <algorithm>
#include <cmath>

#include "backends/vulkan/ops_common.h"
#include "backends/vulkan/vulkan_backend.h"
#include "core/error.h"
#include "kernels/polynorm.h"

namespace difftx::backends::vulkan {

void VulkanBackend::rmsnorm_forward(DevicePtr<const float> x, DevicePtr<const float> g, DevicePtr<float> y,
                                    DevicePtr<float> rstd, int64_t rows, int64_t n, float eps) {
  DIFFTX_CHECK(rows >= 0 && n > 0, "vulkan rmsnorm_forward: rows ", rows, ", width ", n);
  if (rows == 0) return;
  struct {
    uint32_t x_at, g_at, y_at, rstd_at, has_rstd, rows, n;
    float eps;
  } push;
  const Bound gb = bind(g.address(), n * 4, "rmsnorm gain");
  const int64_t step = rows_per_binding(n * 4, "rmsnorm rows");
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t m = std::min(step, rows - r0);
    const Bound xb = bind((x + r0 * n).address(), m * n * 4, "rmsnorm x");
    const Bound yb = bind((y + r0 * n).address(), m * n * 4, "rmsnorm y");
    const Bound rb = bind_optional(rstd ? (rstd + r0).address() : 0, m * 4, "rmsnorm rstd");
    push = {xb.words(), gb.words(), yb.words(), rb.words(), rstd ? 1u : 0u, u32(m), u32(n), eps};
    run(norm_shader("rmsnorm", n), {1, 1, 1, 1}, {xb.info, gb.info, yb.info, rb.info}, &push, sizeof push, m);
  }
}

void VulkanBackend::rope(const DeviceRope& table, kernels::RopeStyle style, DevicePtr<float> x, int64_t heads,
                         const RopePositions& at, bool inverse) {
  DIFFTX_CHECK(table.d > 0 && table.d % 2 == 0 && table.max_T > 0 && table.cos && table.sin,
               "vulkan rope: the table is empty or its width ", table.d, " is odd");
  DIFFTX_CHECK(heads > 0 && at.B >= 0 && at.T >= 0, "vulkan rope: heads ", heads, ", B ", at.B, ", T ", at.T);
  const bool listed = static_cast<bool>(at.positions);
  DIFFTX_CHECK(listed || (at.pos0 >= 0 && at.pos0 + at.T <= table.max_T), "vulkan rope: positions [", at.pos0, ", ",
               at.pos0 + at.T, ") exceed the table's ", table.max_T);
  DIFFTX_CHECK(!listed || at.B == 1, "vulkan rope: a list of positions takes B = 1, got ", at.B);
  const int64_t rows = at.B * at.T, width = heads * table.d, half = table.d / 2;
  struct {
    uint32_t x_at, cos_at, sin_at, pos_at, rows, heads, d, T, pos0, max_T, use_positions, half_style;
    float sign;
  } push;
  const Bound cb = bind(table.cos.address(), table.max_T * half * 4, "rope cos");
  const Bound sb = bind(table.sin.address(), table.max_T * half * 4, "rope sin");
  // Windows of whole sequences (pos0 + row % T needs the row's place in its sequence), or of
  // listed rows.
  const int64_t unit = listed ? 1 : std::max<int64_t>(at.T, 1);
  const int64_t step = std::max<int64_t>(1, rows_per_binding(width * 4, "rope x") / unit) * unit;
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t m = std::min(step, rows - r0);
    const Bound xb = bind((x + r0 * width).address(), m * width * 4, "rope x");
    const Bound pb = bind_optional(listed ? (at.positions + r0).address() : 0, m * 8, "rope positions");
    push = {xb.words(), cb.words(), sb.words(), pb.words(), u32(m), u32(heads), u32(table.d),
            u32(std::max<int64_t>(at.T, 1)), u32(at.pos0), u32(table.max_T), listed ? 1u : 0u,
            style == kernels::RopeStyle::half ? 1u : 0u,
            inverse ? -1.0f : 1.0f};
    run("rope", {1, 1, 1, 1}, {xb.info, cb.info, sb.info, pb.info}, &push, sizeof push,
        groups_of(m * heads * half, kElementGroup));
  }
}

void VulkanBackend::elementwise(std::string_view op, DevicePtr<float> y, DevicePtr<const float> a,
                                DevicePtr<const float> b, float s, int64_t n) {
  DIFFTX_CHECK(n >= 0, "vulkan ", op, ": n = ", n);
  struct {
    uint32_t y_at, a_at, b_at, n;
    float s;
  } push;
  const int64_t step = rows_per_binding(4, "elements") / kElementGroup * kElementGroup;
  for (int64_t i0 = 0; i0 < n; i0 += step) {
    const int64_t m = std::min(step, n - i0);
    const Bound yb = bind((y + i0).address(), m * 4, "y");
    const Bound ab = bind((a + i0).address(), m * 4, "input");
    const Bound bb = bind_optional(b ? (b + i0).address() : 0, m * 4, "second input");
    push = {yb.words(), ab.words(), bb.words(), u32(m), s};
    run(op, {1, 1, 1}, {yb.info, ab.info, bb.info}, &push, sizeof push, groups_of(m, kElementGroup));
  }
}

void VulkanBackend::add(DevicePtr<float> y, DevicePtr<const float> x, int64_t n) {
  elementwise("add", y, x, nullptr, 0, n);
}

void VulkanBackend::scale(DevicePtr<float> y, DevicePtr<const float> x, float s, int64_t n) {
  elementwise("scale", y, x, nullptr, s, n);
}

void VulkanBackend::swiglu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<float> h, int64_t n) {
  elementwise("swiglu", h, g, u, 0, n);
}

void VulkanBackend::polynorm_glu_forward(DevicePtr<const float> g, DevicePtr<const float> u, DevicePtr<const float> w,
                                         DevicePtr<const float> b, DevicePtr<float> h, int64_t rows, int64_t F) {
  DIFFTX_CHECK(rows >= 0 && F > 0 && w && b, "vulkan polynorm_glu_forward: rows ", rows, ", F ", F,
               " (w and b must be given)");
  struct {
    uint32_t g_at, u_at, w_at, b_at, h_at, rows, F;
    float eps;
  } push;
  const Bound wb = bind(w.address(), 3 * 4, "polynorm w");
  const Bound bb = bind(b.address(), 4, "polynorm b");
  const int64_t step = rows_per_binding(F * 4, "polynorm rows");
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t m = std::min(step, rows - r0);
    const Bound gb = bind((g + r0 * F).address(), m * F * 4, "polynorm g");
    const Bound ub = bind((u + r0 * F).address(), m * F * 4, "polynorm u");
    const Bound hb = bind((h + r0 * F).address(), m * F * 4, "polynorm h");
    push = {gb.words(), ub.words(), wb.words(), bb.words(), hb.words(), u32(m), u32(F),
            static_cast<float>(kernels::kPolyNormEps)};
    run(norm_shader("polynorm", F), {1, 1, 1, 1, 1}, {gb.info, ub.info, wb.info, bb.info, hb.info}, &push, sizeof push,
        m);
  }
}

void VulkanBackend::gather_rows(DevicePtr<const float> src, DevicePtr<const int32_t> rows, int64_t count, int64_t width,
                                DevicePtr<float> dst) {
  DIFFTX_CHECK(count >= 0 && width > 0, "vulkan gather_rows: ", count, " rows of width ", width);
  if (count == 0) return;
  // src: every row from `src` to its allocation's end that fits one binding.
  const Resolved r = memory_.resolve(src.address(), width * 4, "gather_rows source");
  const int64_t src_rows =
      std::min((r.size - r.offset) / (width * 4), rows_per_binding(width * 4, "gather_rows source"));
  const Bound sb = bind(src.address(), src_rows * width * 4, "gather_rows source");
  struct {
    uint32_t src_at, rows_at, dst_at, count, width, src_rows;
  } push;
  const int64_t step = rows_per_binding(width * 4, "gather_rows destination");
  for (int64_t i0 = 0; i0 < count; i0 += step) {
    const int64_t m = std::min(step, count - i0);
    const Bound ib = bind((rows + i0).address(), m * 4, "gather_rows rows");
    const Bound db = bind((dst + i0 * width).address(), m * width * 4, "gather_rows destination");
    push = {sb.words(), ib.words(), db.words(), u32(m), u32(width), u32(src_rows)};
    run("gather_rows", {1, 1, 1}, {sb.info, ib.info, db.info}, &push, sizeof push, groups_of(m * width, kElementGroup));
  }
}

void VulkanBackend::diff_lambda(DevicePtr<const float> lq1, DevicePtr<const float> lk1, DevicePtr<const float> lq2,
                                DevicePtr<const float> lk2, int64_t d, double lambda_init, DevicePtr<float> out) {
  DIFFTX_CHECK(d > 0, "vulkan diff_lambda: d = ", d);
  const float high = static_cast<float>(lambda_init);
  struct {
    uint32_t q1_at, k1_at, q2_at, k2_at, out_at, d;
    float init_high, init_low;
  } push;
  const Bound q1 = bind(lq1.address(), d * 4, "lambda_q1"), k1 = bind(lk1.address(), d * 4, "lambda_k1");
  const Bound q2 = bind(lq2.address(), d * 4, "lambda_q2"), k2 = bind(lk2.address(), d * 4, "lambda_k2");
  const Bound o = bind(out.address(), 4, "lambda");
  push = {q1.words(), k1.words(), q2.words(), k2.words(), o.words(), u32(d), high,
          static_cast<float>(lambda_init - static_cast<double>(high))};
  run(context_->caps().float64 ? "diff_lambda_f64" : "diff_lambda_f32", {1, 1, 1, 1, 1},
      {q1.info, k1.info, q2.info, k2.info, o.info}, &push, sizeof push, 1);
}

}  // namespace difftx::backends::vulkan
