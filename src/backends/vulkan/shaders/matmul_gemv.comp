// y[n, col] (= or +=) x[n, :] . W[col, :] for up to NMAX rows of x: the decode GEMV. A workgroup
// takes ROWS weight rows, LANES threads each; a row's lanes take its units (weight_units.glsl: 8
// float weights, a Q8_0 / Q4_0 block, a Q4_K group) in turn, unit u by lane u % LANES, AHEAD
// units loaded before any is used (a decode step's matrices are read once, so a thread keeps
// several wide loads in flight), x read 4 floats at a time. Each row of x has its own
// accumulator per lane: a unit adds (s.x + s.y) + (s.z + s.w) where s is a vec4 FMA chain over
// the unit's weights; the lanes' sums are then added in a fixed tree. So an output's bits depend
// on its x row and its weight row alone, never on how many rows of x come along, where the row
// falls, or how its bytes are aligned (a load's width changes only how bytes are fetched). NMAX
// (1, 2, 4, 8 or 16) is one variant each (shaders.cmake): a single decode row must not pay for 16
// accumulators; so is ALIGNED (every row of x and of W starts 16-byte aligned), since a choice per
// load makes lavapipe's compile slow and its runs twice as long (it takes every path of a branch).
#version 450
#include "common.glsl"

#define LANES 32u
#define ROWS 4u
#define WG (ROWS * LANES)
#if !defined(NMAX) || !defined(ALIGNED)
#error NMAX (rows of x, at most 16) and ALIGNED (x and W read 16 bytes at a time) are defined by shaders.cmake
#endif
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 0) readonly buffer W4Buffer { uvec4 w4[]; } W4;
layout(std430, set = 0, binding = 1) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer X4Buffer { vec4 x4[]; } X4;
layout(std430, set = 0, binding = 2) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint w_byte;     // byte of weight row 0 (of this window) in W's binding
  uint row_bytes;  // bytes of one weight row
  uint rows;       // weight rows in this window: the outputs of one x row
  uint cols;       // the shared width
  uint x_at;       // float of x[0, 0]
  uint y_at;       // float of y[0, first output of the window]
  uint y_stride;   // floats between rows of y
  uint n;          // rows of x (<= NMAX)
  uint accumulate;
} p;

#include "weights.glsl"
#include "weight_units.glsl"

#if WTYPE == 5
#define AHEAD 1u  // units of 48 bytes
#elif WTYPE == 0 || WTYPE >= 3
#define AHEAD 2u  // 32-byte F32 units, 34- and 18-byte blocks
#else
#define AHEAD 4u  // 16-byte BF16 / F16 units
#endif

shared float partial[NMAX][WG];

// x[at .. at + 3], columns k .. k + 3 of a row; in a row's last, partial unit (tail) 0 past cols.
// ALIGNED: every row of x starts 16-byte aligned and holds whole vec4s (the host picks the variant).
vec4 x4(uint at, uint k, bool tail) {
  if (tail) {
    vec4 v = vec4(0.0);
    [[unroll]] for (uint j = 0u; j < 4u; ++j)
      if (k + j < p.cols) v[j] = X.x[at + j];
    return v;
  }
#if ALIGNED
  return X4.x4[at >> 2];
#else
  return vec4(X.x[at], X.x[at + 1u], X.x[at + 2u], X.x[at + 3u]);
#endif
}

// acc[i] += x[i, k .. k + UNIT) . v for the rows of x.
void add_unit(inout float acc[NMAX], const vec4 v[UNIT / 4u], uint k, bool tail) {
  [[unroll]] for (uint i = 0u; i < NMAX; ++i) {
    if (i < p.n) {
      const uint at = p.x_at + i * p.cols + k;
      vec4 s = vec4(0.0);
      [[unroll]] for (uint q = 0u; q < UNIT / 4u; ++q) s = fma(v[q], x4(at + 4u * q, k + 4u * q, tail), s);
      acc[i] += (s.x + s.y) + (s.z + s.w);
    }
  }
}

void main() {
  const uint t = gl_LocalInvocationID.x, lane = t % LANES, slot = t / LANES;
  const uint r = group_index() * ROWS + slot;  // this thread's weight row
  float acc[NMAX];
  [[unroll]] for (uint i = 0u; i < NMAX; ++i) acc[i] = 0.0;
  if (r < p.rows) {
    const uint row = p.w_byte + r * p.row_bytes;
    const uint full = p.cols / UNIT;  // whole units: all but a float row's last 1-7 weights
    uint u = lane;
    for (; u + (AHEAD - 1u) * LANES < full; u += AHEAD * LANES) {
      uint raw[AHEAD][RAW];
      [[unroll]] for (uint a = 0u; a < AHEAD; ++a) load_unit(row, u + a * LANES, raw[a]);
      [[unroll]] for (uint a = 0u; a < AHEAD; ++a) {
        vec4 v[UNIT / 4u];
        decode_unit(raw[a], row, u + a * LANES, v);
        add_unit(acc, v, UNIT * (u + a * LANES), false);
      }
    }
    for (; u < full; u += LANES) {
      uint raw[RAW];
      load_unit(row, u, raw);
      vec4 v[UNIT / 4u];
      decode_unit(raw, row, u, v);
      add_unit(acc, v, UNIT * u, false);
    }
#if WTYPE <= 2
    if (u * UNIT < p.cols) {  // the row's last 1-7 weights
      float w[8];
      dequant8(row, UNIT * u, p.cols, w);
      const vec4 v[2] = vec4[2](vec4(w[0], w[1], w[2], w[3]), vec4(w[4], w[5], w[6], w[7]));
      add_unit(acc, v, UNIT * u, true);
    }
#endif
  }
  [[unroll]] for (uint i = 0u; i < NMAX; ++i) partial[i][t] = acc[i];
  [[unroll]] for (uint s = LANES / 2u; s > 0u; s >>= 1) {
    barrier();
    if (lane < s)
      [[unroll]] for (uint i = 0u; i < NMAX; ++i) partial[i][t] += partial[i][t + s];
  }
  barrier();
  // Lane i writes x row i's output of this weight row.
  if (r < p.rows && lane < NMAX && lane < p.n) {
    const float sum = partial[lane][slot * LANES];
    const uint at = p.y_at + lane * p.y_stride + r;
    Y.y[at] = p.accumulate != 0u ? Y.y[at] + sum : sum;
  }
}
