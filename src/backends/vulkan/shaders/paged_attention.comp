// Paged split-K decode attention, first pass (decode_attention.h): one workgroup per (group of
// rows, kv head, chunk of the group's positions) scores the rows' queries against the chunk's keys
// for every map of the kv head and keeps, per row and map, the running max, the sum and the
// unnormalised output: an item of M (vw + 2) floats a row that paged_merge.comp combines.
// A row's chunk is decode_chunk() of its length (decode_chunk.glsl): on a GPU a short row is split
// into chunks of 32 positions, so that a decode step's one row per sequence keeps many workgroups
// busy (128 on a CPU device); a long one into at most max_items chunks.
// A group is a run of rows of one sequence at consecutive positions and of one chunk size (a
// prompt chunk, draft verification rows) of at most p.group rows (p.group * M <= PAIRS: a variant
// per bound, so that a decode row does not carry a prompt's registers and loops), starting on a
// multiple of p.group or where the run starts; any other row is a group of its own. A group's rows
// share every key and value the workgroup loads (a prompt of T rows reads the cache T / group
// times, not T times), and each row's arithmetic is the one it has alone, so its bits never depend
// on its neighbours:
// positions come PP = min(chunk, WG) at a time, in passes that end on multiples of PP whatever the
// pages, so a row's chunks and passes depend on its length alone. S = WG / PP threads share a
// position's key: each loads a slice of its elements (S = 4 for a chunk of 32: a quarter of the
// loads each, in flight together) once for every (row, map) pair, and the slices' partial scores
// are added in slice order. A pass's keys are read in runs of pages whose regions share a binding
// window (a uniform index into kv[]), and the key phase notes where each position lies; the
// values follow, VLOADS positions at a time across pages (SHARED_VALUES: every thread reads the
// same position, so its window is uniform) or a page at a time (every thread the same page). Keys' elements and values'
// positions are loaded several at a time before their products, which stay one chain in order for
// each slice, row and map (the bits depend on neither the loads nor the group).
// window > 0: a row of length n attends to positions [n - window, n) only; its chunks start at
// the one its window starts in (item c is the row's c-th), so a long row of a sliding layer
// runs the window's chunks, not its length's, and never reads the block entries before them
// (blocks given back). A group's rows start their windows up to group - 1 positions apart, so
// such a group takes one chunk more than its first row (p.slots).
#version 450
#include "common.glsl"
#include "kv_push.glsl"

#define WG 128
#if !defined(PAIRS) || !defined(SHARED_VALUES)
#error PAIRS (rows * maps: 1, 2, 4, 8, 16 or 32) and SHARED_VALUES, a variant each, are defined by shaders.cmake
#endif
#define PMAX 32     // the largest PAIRS: (row, map) pairs of a workgroup, rows * M
#define QMAX 2048   // rows * M * d
#define ACC 32      // rows * M * vw <= WG * ACC
#define LOADS 8u    // loads in flight per thread before their products
#define VLOADS 16u  // values in flight per thread (SHARED_VALUES)
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer QBuffer { float q[]; } Q;
layout(std430, set = 0, binding = 1) readonly buffer LengthBuffer { int i[]; } Lengths;
layout(std430, set = 0, binding = 2) readonly buffer TableBuffer { int i[]; } Tables;
layout(std430, set = 0, binding = 3) readonly buffer BlockBuffer { int i[]; } Blocks;
layout(std430, set = 0, binding = 4) writeonly buffer PartBuffer { float f[]; } Part;
layout(std430, set = 0, binding = 5) readonly buffer KvBuffer { uint w[]; } kv[KV_WINDOWS];
layout(push_constant) uniform Push {
  KV_PUSH;
  uint M, r, count, group;                   // maps per kv head, signal maps per noise map, rows,
                                             // rows per group (times M at most PAIRS)
  uint q_at, q_width;
  uint lengths_at, tables_at, blocks_at;
  uint part_at, min_chunk, max_items;        // decode_chunk.glsl
  uint max_chunks, slots;                    // items a row at most; chunks per group (+ 1 windowed)
  uint window;                               // 0: every position
  float scale;                               // 1 / sqrt(d)
  uint max_length;                           // the longest row's length: its chunks are planned
} p;

#include "kv.glsl"
#include "decode_chunk.glsl"

shared float qs[QMAX];                       // [row][map][d], scaled
shared float scores[PMAX * WG];              // [row][map][position in the pass]; first [slice][row][map][position]
shared float alpha[PMAX], pass_max[PMAX];
shared uint pass_lo[PMAX], pass_hi[PMAX];   // each pair's positions in the pass (none: lo >= hi)
shared uint pass_win[WG], pass_base[WG];    // each position's binding window and region byte
shared float pass_scale[2][WG];              // INT8: each position's key scales (k1, k2), read
                                             // where the window index is uniform

float element(uint win, uint at) {  // one cached element at byte `at`, widened (INT8: unscaled)
  const uint word = kv[win].w[at >> 2];
  if (p.storage == 0u) return uintBitsToFloat(word);
  if (p.storage == 1u) return bf16_low(word >> ((at & 2u) << 3));
  return float(bitfieldExtract(int(word), int((at & 3u) << 3), 8));
}
float scale_at(uint win, uint at) { return uintBitsToFloat(kv[win].w[at >> 2]); }
// An entry past the bound list, or naming no block of the pool, reads block 0 (never out of bounds).
uint block_of(uint table, uint pos) {
  const uint at = p.blocks_at + table + pos / p.P;
  const int block = at < uint(Blocks.i.length()) ? Blocks.i[at] : -1;
  return block >= 0 && uint(block) < p.blocks ? uint(block) : 0u;
}
// A length outside [1, max_length] reads as 0: the row sees no chunk (paged_merge.comp writes it as NaN).
uint length_of(uint row) {
  const int length = Lengths.i[p.lengths_at + row];
  return length >= 1 && uint(length) <= p.max_length ? uint(length) : 0u;
}
uint table_of(uint row) { return uint(Tables.i[p.tables_at + row]); }
// The group's first row's length, and the chunk: its size, its index among the positions, its
// first position, and the positions of a pass.
uint length0, chunk, at, c0, PP;
// Row i's positions in the chunk (none: x >= y), and those in the pass [P0, P0 + PP).
uvec2 in_chunk(uint i) {
  const uint first = window_start(length0 + i);
  if (first / chunk > at) return uvec2(1u, 0u);
  return uvec2(max(c0, first), min(length0 + i, c0 + chunk));
}
bool sees_chunk(uint i) {
  const uvec2 r = in_chunk(i);
  return r.x < r.y;
}
uvec2 in_pass(uint i, uint P0) {
  const uvec2 r = in_chunk(i);
  return uvec2(max(r.x, P0), min(r.y, P0 + PP));
}
// Row i's item for the chunk: its own chunk index, counted from the one its window starts in.
uint item_of(uint row0, uint i, uint g) {
  const uint own = at - window_start(length0 + i) / chunk;
  return p.part_at + (((row0 + i) * p.Hkv + g) * p.max_chunks + own) * p.M * (kv_key_width() + 2u);
}
// Whether row i carries on the group of row i - 1 (a row of no length is a group of its own).
bool continues(uint i) {
  const uint length = length_of(i);
  return i % p.group != 0u && table_of(i) == table_of(i - 1u) && length > 1u && length_of(i - 1u) == length - 1u &&
         decode_chunk(length) == decode_chunk(length - 1u);
}

void main() {
  const uint id = group_index();
  const uint row0 = id / (p.Hkv * p.slots), g = (id / p.slots) % p.Hkv, c = id % p.slots;
  if (row0 >= p.count || (row0 > 0u && continues(row0))) return;  // not a group's first row
  uint rows = 1u;
  while (rows < p.group && row0 + rows < p.count && continues(row0 + rows)) ++rows;
  length0 = length_of(row0);
  if (length0 == 0u) return;  // a length outside its bound: no chunk
  const uint table = table_of(row0);
  // The chunk: the group's first row's c-th; row i's is its own (c or c - 1 with a window).
  chunk = decode_chunk(length0);
  at = window_start(length0) / chunk + c;
  c0 = at * chunk;
  if (c0 >= length0 + rows - 1u) return;  // past the last row's length
  const uint t = gl_LocalInvocationID.x, M = p.M, d = p.d, vw = kv_key_width(), es = kv_element_bytes();
  PP = min(chunk, WG);
  const uint S = WG / PP, slice = t / PP;  // threads per position; this thread's slice of its key
  const bool int8 = p.storage == 2u;
  const uint pairs = rows * M;
  uint k2_pairs = 0u;  // bit e: pair e's map scores against the key head's second half (V1's noise maps, k2)
  for (uint e = 0u; e < pairs; ++e)
    if (p.v1 != 0u && (g * M + e % M) % (p.r + 1u) == p.r) k2_pairs |= 1u << e;
  // Where vw divides WG a thread's accumulators are all of column t % vw: with SHARED_VALUES it
  // loads each value once for all of them (on a GPU 8 times faster for a DiffLlama row alone,
  // whose thread has 8). Without, each accumulator loads its own: the one-row variant on a CPU
  // device, where lavapipe runs it five times faster (it executes the shared loop's unrolled
  // checks whatever the rows). The bits are the same either way.
  const bool shared_column = SHARED_VALUES != 0 && WG % vw == 0u;
  for (uint e = t; e < pairs * d; e += WG)
    qs[e] = Q.q[p.q_at + (row0 + e / (M * d)) * p.q_width + g * M * d + e % (M * d)] * p.scale;
  // Threads < pairs: (row t / M, map t % M). `precise`: run_sum * alpha + sum stays a product and a
  // sum, never fused, in every variant of the group bound alike.
  float run_max = uintBitsToFloat(0xff800000u);
  precise float run_sum = 0.0;
  float acc[ACC];
  [[unroll]] for (uint j = 0u; j < ACC; ++j) acc[j] = 0.0;
  barrier();

  const uint last = min(length0 + rows - 1u, c0 + chunk);  // the group's positions end here
  // A slice of a key: [x0, x1) of its d elements.
  const uint slice_width = (d + S - 1u) / S, x0 = min(d, slice * slice_width), x1 = min(d, x0 + slice_width);
  for (uint P0 = c0; P0 < last; P0 += PP) {
    if (t < pairs) {
      const uvec2 range = in_pass(t / M, P0);
      pass_lo[t] = range.x;
      pass_hi[t] = range.y;
    }
    barrier();
    uint lo = P0 + PP, hi = P0;  // the pass: every row's positions in [P0, P0 + PP)
    for (uint i = 0u; i < pairs; i += M)
      if (pass_lo[i] < pass_hi[i]) lo = min(lo, pass_lo[i]), hi = max(hi, pass_hi[i]);
    if (lo >= hi) {  // uniform: no row has positions here (a window starts past the pass)
      barrier();  // every thread has read pass_lo and pass_hi before the next pass writes them
      continue;
    }
    const uint pos = P0 + t % PP;
    for (uint run = lo; run < hi;) {  // the same runs in every thread
      const uint win = kv_region(block_of(table, run)).x;
      uint run_end = min(hi, (run / p.P + 1u) * p.P);
      while (run_end < hi && kv_region(block_of(table, run_end)).x == win) run_end = min(hi, run_end + p.P);
      if (pos >= run && pos < run_end) {
        const uint base = kv_region(block_of(table, pos)).y, tt = pos % p.P;
        if (slice == 0u) {
          pass_win[pos - P0] = win;
          pass_base[pos - P0] = base;
          if (int8)
            [[unroll]] for (uint h = 0u; h < 2u; ++h)
              if (h < kv_heads_per_kv())
                pass_scale[h][pos - P0] =
                    scale_at(win, base + kv_key_element_bytes() + ((g * kv_heads_per_kv() + h) * p.P + tt) * 4u);
        }
        // Every pair's partial score against the slice of the position's key (a V1 noise map's
        // against k2): its elements loaded LOADS at a time (both key heads' for V1), once for
        // every pair, before their products (a GPU thread keeps them in flight together); each
        // pair's products one chain in element order.
        const uint heads = kv_heads_per_kv();
        float s[PAIRS];
        [[unroll]] for (uint e = 0u; e < PAIRS; ++e) s[e] = 0.0;
        uint x = x0;
        for (; x + LOADS <= x1; x += LOADS) {
          float k[2][LOADS];
          [[unroll]] for (uint h = 0u; h < 2u; ++h)
            [[unroll]] for (uint j = 0u; j < LOADS; ++j)
              k[h][j] = h < heads ? element(win, base + kv_key_element(g, tt, h * d + x + j) * es) : 0.0;
          [[unroll]] for (uint e = 0u; e < PAIRS; ++e) {
            if (e >= pairs) break;
            const bool noise = ((k2_pairs >> e) & 1u) != 0u;
            [[unroll]] for (uint j = 0u; j < LOADS; ++j) s[e] = fma(qs[e * d + x + j], noise ? k[1][j] : k[0][j], s[e]);
          }
        }
        for (; x < x1; ++x) {
          const float k0 = element(win, base + kv_key_element(g, tt, x) * es);
          const float k1 = heads > 1u ? element(win, base + kv_key_element(g, tt, d + x) * es) : 0.0;
          [[unroll]] for (uint e = 0u; e < PAIRS; ++e) {
            if (e >= pairs) break;
            s[e] = fma(qs[e * d + x], ((k2_pairs >> e) & 1u) != 0u ? k1 : k0, s[e]);
          }
        }
        [[unroll]] for (uint e = 0u; e < PAIRS; ++e) {
          if (e >= pairs) break;
          scores[(slice * pairs + e) * PP + pos - P0] = s[e];
        }
      }
      run = run_end;
    }
    barrier();
    // Each (pair, position)'s score: its slices' partial sums in slice order, into slice 0's place
    // (which only this thread reads), times the key head's scale for INT8.
    for (uint e = t; e < pairs * PP; e += WG) {
      const uint pair = e / PP, u = e % PP;
      if (P0 + u < lo || P0 + u >= hi) continue;
      float score = scores[pair * PP + u];
      for (uint i = 1u; i < S; ++i) score += scores[(i * pairs + pair) * PP + u];
      if (int8) score *= pass_scale[(k2_pairs >> pair) & 1u][u];
      scores[pair * PP + u] = score;
    }
    barrier();
    const uvec2 mine = t < pairs ? uvec2(pass_lo[t], pass_hi[t]) : uvec2(1u, 0u);  // this thread's pair's
    const bool scoring = mine.x < mine.y;
    if (scoring) {  // the pair's running max over the pass, and how much its old terms shrink
      float mx = run_max;
      for (uint i = mine.x; i < mine.y; ++i) mx = max(mx, scores[t * PP + i - P0]);
      alpha[t] = exp(run_max - mx);  // 0 at the row's first pass (run_max = -inf)
      pass_max[t] = run_max = mx;
    }
    barrier();
    for (uint e = t; e < pairs * PP; e += WG) {  // every position's exps at once
      const uint pair = e / PP, at_pos = P0 + e % PP;
      if (at_pos >= pass_lo[pair] && at_pos < pass_hi[pair]) scores[e] = exp(scores[e] - pass_max[pair]);
    }
    barrier();
    if (scoring) {  // their sum in position order
      float sum = 0.0;
      for (uint i = mine.x; i < mine.y; ++i) sum += scores[t * PP + i - P0];
      run_sum = run_sum * alpha[t] + sum;
    }
    // The outputs: accumulator j is (pair e / vw, column e % vw), e = t + WG j, over its row's
    // positions in the pass, one chain in position order.
    [[unroll]] for (uint j = 0u; j < ACC; ++j) {
      const uint e = t + WG * j;
      if (e >= pairs * vw) break;
      if (pass_lo[e / vw] < pass_hi[e / vw]) acc[j] *= alpha[e / vw];
    }
    if (shared_column) {  // each of the column's values loaded once for every accumulator, VLOADS at a time
      for (uint k = lo; k < hi; k += VLOADS) {  // where each position lies: from the key phase
        float v[VLOADS], vs[VLOADS];
        [[unroll]] for (uint q = 0u; q < VLOADS; ++q) {
          v[q] = vs[q] = 0.0;
          const uint pos = k + q;
          if (pos < hi) {  // uniform, and so is the window: every thread reads this position
            const uint win = pass_win[pos - P0], values = pass_base[pos - P0] + kv_key_bytes(), tt = pos % p.P;
            if (int8) vs[q] = scale_at(win, values + kv_value_element_bytes() + (g * p.P + tt) * 4u);
            v[q] = element(win, values + kv_value_element(g, tt, t % vw) * es);
          }
        }
        [[unroll]] for (uint j = 0u; j < ACC; ++j) {
          const uint e = t + WG * j;
          if (e >= pairs * vw) break;
          const uint pair = e / vw, from = pass_lo[pair], to = pass_hi[pair];
          float a = acc[j];
          [[unroll]] for (uint q = 0u; q < VLOADS; ++q) {
            const uint pos = k + q;
            if (pos >= from && pos < to)
              a = fma(int8 ? scores[pair * PP + pos - P0] * vs[q] : scores[pair * PP + pos - P0], v[q], a);
          }
          acc[j] = a;
        }
      }
    } else {  // each accumulator over its own row's positions in the pass, its values LOADS ahead
      // The pages go by in the same order in every thread (lo and hi are the workgroup's), so the
      // window index into kv[] is uniform, as Vulkan requires of an index without nonuniformEXT;
      // an accumulator takes the part of its row's positions in the page, in position order.
      for (uint page = lo - lo % p.P; page < hi; page += p.P) {
        const uvec2 region = kv_region(block_of(table, page));
        const uint values = region.y + kv_key_bytes();
        [[unroll]] for (uint j = 0u; j < ACC; ++j) {
          const uint e = t + WG * j;
          if (e >= pairs * vw) break;
          const uint pair = e / vw, col = e % vw;
          const uint from = max(pass_lo[pair], page), to = min(pass_hi[pair], page + p.P);
          float a = acc[j];
          for (uint i = from; i < to; i += LOADS) {
            float w[LOADS], v[LOADS];
            [[unroll]] for (uint q = 0u; q < LOADS; ++q) {
              const uint tt = (i + q) % p.P;
              w[q] = v[q] = 0.0;
              if (i + q < to) {
                w[q] = scores[pair * PP + i + q - P0];
                if (int8) w[q] *= scale_at(region.x, values + kv_value_element_bytes() + (g * p.P + tt) * 4u);
                v[q] = element(region.x, values + kv_value_element(g, tt, col) * es);
              }
            }
            [[unroll]] for (uint q = 0u; q < LOADS; ++q)
              if (i + q < to) a = fma(w[q], v[q], a);
          }
          acc[j] = a;
        }
      }
    }
    barrier();
  }
  // Each row's item: its statistics, then its outputs.
  if (t < pairs && sees_chunk(t / M)) {
    const uint item = item_of(row0, t / M, g);
    Part.f[item + t % M] = run_max;
    Part.f[item + M + t % M] = run_sum;
  }
  [[unroll]] for (uint j = 0u; j < ACC; ++j) {
    const uint e = t + WG * j;
    if (e >= pairs * vw) break;
    const uint pair = e / vw;
    if (sees_chunk(pair / M)) Part.f[item_of(row0, pair / M, g) + 2u * M + (pair % M) * vw + e % vw] = acc[j];
  }
}
