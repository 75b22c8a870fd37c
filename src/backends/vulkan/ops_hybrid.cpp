// A hybrid stack's ops (Phi-4-mini-flash's SambaY; kernels/layernorm.h, bias.h, mamba.h):
// LayerNorm with a bias (layernorm.comp), a projection's bias (add_bias.comp), Mamba-1's conv and
// selective scan (mamba_conv.comp, mamba_scan.comp: one shader for the prompt and the step forms,
// hence the same bits), and the GMU from the matmul and SwiGLU ops. The prompt forms go over T in
// dispatches of the rows that fit one binding, each continuing the window and state the last
// left; the step forms bind the pool of windows or states from its base to its allocation's end.
#include <algorithm>

#include "backends/vulkan/ops_common.h"
#include "backends/vulkan/vulkan_backend.h"
#include "core/error.h"
#include "core/option_name.h"

namespace difftx::backends::vulkan {

using kernels::MambaDims;

namespace {

constexpr int64_t kMambaGroup = 64;  // mamba_conv.comp's and mamba_scan.comp's workgroup

// Invocations that hold one channel's S state entries in mamba_scan.comp: a power of two >= S,
// at most the workgroup (each then holds up to kMambaMostState / 64 entries).
int64_t scan_lanes(int64_t S) {
  int64_t lanes = 1;
  while (lanes < S && lanes < kMambaGroup) lanes *= 2;
  return lanes;
}

void check_mamba(const char* op, const MambaDims& dims, int64_t rows, int64_t ld, int64_t least, const char* ld_name) {
  dims.validate();
  DIFFTX_CHECK(rows >= 0, "vulkan ", op, ": the number of rows must be >= 0, got ", rows);
  DIFFTX_CHECK(ld >= least, "vulkan ", op, ": row stride ", ld_name, " (", ld, ") must be at least ", least);
}

}  // namespace

void VulkanBackend::layernorm_forward(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                                      DevicePtr<float> y, DevicePtr<float> mean, DevicePtr<float> rstd, int64_t rows,
                                      int64_t n, float eps) {
  DIFFTX_CHECK(rows >= 0 && n > 0 && eps >= 0, "vulkan layernorm_forward: rows ", rows, ", width ", n, ", eps ", eps);
  DIFFTX_CHECK(rows == 0 || (w && b && mean && rstd), "vulkan layernorm_forward: w, b, mean and rstd must be given");
  if (rows == 0) return;
  struct {
    uint32_t x_at, w_at, b_at, y_at, mean_at, rstd_at, rows, n;
    float eps;
  } push;
  const Bound wb = bind(w.address(), n * 4, "layernorm w");
  const Bound bb = bind(b.address(), n * 4, "layernorm b");
  const int64_t step = rows_per_binding(n * 4, "layernorm rows");
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t m = std::min(step, rows - r0);
    const Bound xb = bind((x + r0 * n).address(), m * n * 4, "layernorm x");
    const Bound yb = bind((y + r0 * n).address(), m * n * 4, "layernorm y");
    const Bound mb = bind((mean + r0).address(), m * 4, "layernorm mean");
    const Bound rb = bind((rstd + r0).address(), m * 4, "layernorm rstd");
    push = {xb.words(), wb.words(), bb.words(), yb.words(), mb.words(), rb.words(), u32(m), u32(n), eps};
    run(norm_shader("layernorm", n), {1, 1, 1, 1, 1, 1}, {xb.info, wb.info, bb.info, yb.info, mb.info, rb.info}, &push,
        sizeof push, m);
  }
}

void VulkanBackend::add_bias(DevicePtr<float> y, DevicePtr<const float> bias, int64_t rows, int64_t cols) {
  DIFFTX_CHECK(rows >= 0 && cols >= 1, "vulkan add_bias: rows must be >= 0 and cols >= 1, got rows=", rows,
               " cols=", cols);
  if (rows == 0) return;
  struct {
    uint32_t y_at, bias_at, n, cols;
  } push;
  const Bound bb = bind(bias.address(), cols * 4, "add_bias bias");
  const int64_t step = rows_per_binding(cols * 4, "add_bias rows");
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t m = std::min(step, rows - r0);
    const Bound yb = bind((y + r0 * cols).address(), m * cols * 4, "add_bias y");
    push = {yb.words(), bb.words(), u32(m * cols), u32(cols)};
    run("add_bias", {1, 1}, {yb.info, bb.info}, &push, sizeof push, groups_of(m * cols, kElementGroup));
  }
}

VulkanBackend::SlotPool VulkanBackend::bind_slots(DevicePtr<const void> base, int64_t width, const char* what,
                                                  OptionSpelling spelling) {
  if (width == 0) return {bind_optional(0, 0, what), 0x7fffffff};  // K = 1: no window to read
  const Resolved r = memory_.resolve(base.address(), width * 4, what);
  const int64_t count = (r.size - r.offset) / (width * 4), fit = rows_per_binding(width * 4, what);
  DIFFTX_CHECK(count <= fit, "vulkan ", what, ": a pool of ", count, " slots of ", width * 4, " bytes; one binding of ",
               info().name, " holds ", fit, ": ask for fewer with ", option_name("max_running", spelling), " (or ",
               option_name("draft_tokens", spelling), ")");
  return {bind(base.address(), count * width * 4, what), u32(count)};
}

// One dispatch of mamba_conv.comp: `rows` sequences of T tokens (T = 1 with slots, else rows = 1).
void VulkanBackend::mamba_conv(const MambaDims& dims, int64_t rows, int64_t T, DevicePtr<const float> x, int64_t ld_x,
                               DevicePtr<const float> w, DevicePtr<const float> bias, const SlotPool& windows,
                               DevicePtr<const int32_t> slots, DevicePtr<float> u) {
  const int64_t E = dims.channels, K = dims.conv, n = rows * T;
  struct {
    uint32_t x_at, ld_x, w_at, bias_at, win_at, slots_at, u_at;
    uint32_t use_slots, slot_count, rows, T, E, K;
  } push;
  const Bound xb = bind(x.address(), ((n - 1) * ld_x + E) * 4, "mamba conv x");
  const Bound wb = bind(w.address(), E * K * 4, "mamba conv w");
  const Bound bb = bind(bias.address(), E * 4, "mamba conv bias");
  const Bound sb = bind_optional(slots.address(), rows * 4, "mamba conv slots");
  const Bound ub = bind(u.address(), n * E * 4, "mamba conv u");
  push = {xb.words(), u32(ld_x), wb.words(), bb.words(), windows.bound.words(), sb.words(), ub.words(),
          slots ? 1u : 0u, windows.count, u32(rows), u32(T), u32(E), u32(K)};
  run("mamba_conv", {1, 1, 1, 1, 1, 1}, {xb.info, wb.info, bb.info, windows.bound.info, sb.info, ub.info}, &push,
      sizeof push, groups_of(rows * E, kMambaGroup));
}

void VulkanBackend::mamba_conv_prompt(const MambaDims& dims, int64_t T, DevicePtr<const float> x, int64_t ld_x,
                                      DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> window,
                                      DevicePtr<float> u) {
  check_mamba("mamba_conv_prompt", dims, T, ld_x, dims.channels, "ld_x");
  if (T == 0) return;
  const int64_t E = dims.channels, W = (dims.conv - 1) * E;
  const SlotPool pool{bind_optional(W ? window.address() : 0, W * 4, "mamba conv window"), 1};
  const int64_t step = rows_per_binding(ld_x * 4, "mamba_conv_prompt rows");
  for (int64_t t0 = 0; t0 < T; t0 += step)
    mamba_conv(dims, 1, std::min(step, T - t0), x + t0 * ld_x, ld_x, w, bias, pool, nullptr, u + t0 * E);
}

void VulkanBackend::mamba_conv_step(const MambaDims& dims, int64_t rows, DevicePtr<const float> x, int64_t ld_x,
                                    DevicePtr<const float> w, DevicePtr<const float> bias, DevicePtr<float> windows,
                                    DevicePtr<const int32_t> slots, DevicePtr<float> u, OptionSpelling spelling) {
  check_mamba("mamba_conv_step", dims, rows, ld_x, dims.channels, "ld_x");
  if (rows == 0) return;
  DIFFTX_CHECK(slots, "vulkan mamba_conv_step: slots must be given");
  const SlotPool pool = bind_slots(windows, (dims.conv - 1) * dims.channels, "mamba conv windows", spelling);
  const int64_t step = rows_per_binding(ld_x * 4, "mamba_conv_step rows");
  for (int64_t r0 = 0; r0 < rows; r0 += step)
    mamba_conv(dims, std::min(step, rows - r0), 1, x + r0 * ld_x, ld_x, w, bias, pool, slots + r0,
               u + r0 * dims.channels);
}

// One dispatch of mamba_scan.comp: `rows` sequences of T tokens (T = 1 with slots, else rows = 1).
void VulkanBackend::mamba_scan(const MambaDims& dims, int64_t rows, int64_t T, DevicePtr<const float> u,
                               DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias,
                               DevicePtr<const float> a_log, DevicePtr<const float> B, DevicePtr<const float> C,
                               int64_t ld_bc, DevicePtr<const float> D, const SlotPool& states,
                               DevicePtr<const int32_t> slots, DevicePtr<float> y) {
  const int64_t E = dims.channels, S = dims.state, n = rows * T, lanes = scan_lanes(S);
  struct {
    uint32_t u_at, dt_at, dt_bias_at, a_log_at, b_at, c_at, ld_bc, d_at, state_at, slots_at, y_at;
    uint32_t use_slots, slot_count, rows, T, E, S, lanes;
  } push;
  const Bound ub = bind(u.address(), n * E * 4, "mamba scan u");
  const Bound tb = bind(dt_in.address(), n * E * 4, "mamba scan dt_in");
  const Bound tbb = bind(dt_bias.address(), E * 4, "mamba scan dt_bias");
  const Bound ab = bind(a_log.address(), E * S * 4, "mamba scan a_log");
  const Bound bb = bind(B.address(), ((n - 1) * ld_bc + S) * 4, "mamba scan B");
  const Bound cb = bind(C.address(), ((n - 1) * ld_bc + S) * 4, "mamba scan C");
  const Bound db = bind(D.address(), E * 4, "mamba scan D");
  const Bound sb = bind_optional(slots.address(), rows * 4, "mamba scan slots");
  const Bound yb = bind(y.address(), n * E * 4, "mamba scan y");
  push = {ub.words(), tb.words(), tbb.words(), ab.words(), bb.words(), cb.words(), u32(ld_bc), db.words(),
          states.bound.words(), sb.words(), yb.words(), slots ? 1u : 0u, states.count, u32(rows), u32(T),
          u32(E), u32(S), u32(lanes)};
  run("mamba_scan", {1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {ub.info, tb.info, tbb.info, ab.info, bb.info, cb.info, db.info, states.bound.info, sb.info, yb.info}, &push,
      sizeof push, rows * groups_of(E, kMambaGroup / lanes));
}

void VulkanBackend::mamba_scan_prompt(const MambaDims& dims, int64_t T, DevicePtr<const float> u,
                                      DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias,
                                      DevicePtr<const float> a_log, DevicePtr<const float> B,
                                      DevicePtr<const float> C, int64_t ld_bc, DevicePtr<const float> D,
                                      DevicePtr<float> state, DevicePtr<float> y) {
  check_mamba("mamba_scan_prompt", dims, T, ld_bc, dims.state, "ld_bc");
  if (T == 0) return;
  const int64_t E = dims.channels;
  const SlotPool pool{bind(state.address(), E * dims.state * 4, "mamba scan state"), 1};
  const int64_t step = rows_per_binding(std::max(E, ld_bc) * 4, "mamba_scan_prompt rows");
  for (int64_t t0 = 0; t0 < T; t0 += step)
    mamba_scan(dims, 1, std::min(step, T - t0), u + t0 * E, dt_in + t0 * E, dt_bias, a_log, B + t0 * ld_bc,
               C + t0 * ld_bc, ld_bc, D, pool, nullptr, y + t0 * E);
}

void VulkanBackend::mamba_scan_step(const MambaDims& dims, int64_t rows, DevicePtr<const float> u,
                                    DevicePtr<const float> dt_in, DevicePtr<const float> dt_bias,
                                    DevicePtr<const float> a_log, DevicePtr<const float> B, DevicePtr<const float> C,
                                    int64_t ld_bc, DevicePtr<const float> D, DevicePtr<float> states,
                                    DevicePtr<const int32_t> slots, DevicePtr<float> y, OptionSpelling spelling) {
  check_mamba("mamba_scan_step", dims, rows, ld_bc, dims.state, "ld_bc");
  if (rows == 0) return;
  DIFFTX_CHECK(slots, "vulkan mamba_scan_step: slots must be given");
  const int64_t E = dims.channels;
  const SlotPool pool = bind_slots(states, E * dims.state, "mamba scan states", spelling);
  const int64_t step = rows_per_binding(std::max(E, ld_bc) * 4, "mamba_scan_step rows");
  for (int64_t r0 = 0; r0 < rows; r0 += step)
    mamba_scan(dims, std::min(step, rows - r0), 1, u + r0 * E, dt_in + r0 * E, dt_bias, a_log, B + r0 * ld_bc,
               C + r0 * ld_bc, ld_bc, D, pool, slots + r0, y + r0 * E);
}

}  // namespace difftx::backends::vulkan
