// The paged KV cache as the shaders read it (kernels/attention/decode_attention.h and
// kv_layout.cpp define the layout; infer/kv_pool.h the blocks): each (block, layer) region holds
// the layer's keys, in tiles of 16 positions transposed within the tile, then (INT8) one F32
// scale per key head row and position, then the values [Hkv][P][vw], then (INT8) their scales.
// Every part starts on a 64-byte line. The pool may be larger than one binding: it is bound as
// KV_WINDOWS windows of `per_window` regions each, and a region lies wholly in its window.
// The including shader declares its push block with KV_PUSH (kv_push.glsl) first.

uint kv_whole_lines(uint bytes) { return (bytes + 63u) / 64u * 64u; }
uint kv_element_bytes() { return p.storage == 0u ? 4u : p.storage == 1u ? 2u : 1u; }
uint kv_key_width() { return p.v1 != 0u ? 2u * p.d : p.d; }      // = the value width
uint kv_heads_per_kv() { return p.v1 != 0u ? 2u : 1u; }          // key heads per kv head
uint kv_key_element_bytes() { return kv_whole_lines(p.Hkv * p.P * kv_key_width() * kv_element_bytes()); }
uint kv_key_bytes() {
  const uint scales = p.storage == 2u ? kv_whole_lines(p.Hkv * kv_heads_per_kv() * p.P * 4u) : 0u;
  return kv_key_element_bytes() + scales;
}
uint kv_value_element_bytes() { return kv_whole_lines(p.Hkv * p.P * kv_key_width() * kv_element_bytes()); }

// Where (block, layer) lies: its window and the byte of its first key in that window.
uvec2 kv_region(uint block) {
  const uint region = block * p.layers + p.layer;
  return uvec2(region / p.per_window, p.delta + (region % p.per_window) * p.layer_bytes);
}
// Element offsets within a region's keys and values (decode_attention.h key_offset).
uint kv_key_element(uint g, uint pos, uint x) {
  return ((g * (p.P / 16u) + pos / 16u) * kv_key_width() + x) * 16u + pos % 16u;
}
uint kv_value_element(uint g, uint pos, uint x) { return (g * p.P + pos) * kv_key_width() + x; }
