// The push-constant fields of the paged KV cache (kv.glsl), included before the shader's push block.
#define KV_WINDOWS 8
#define KV_PUSH                                                                                     \
  uint P, d, Hkv, v1, storage; /* capacity (tokens per block), head width, kv heads, V1 layout,   \
                                  0 F32 / 1 BF16 / 2 INT8 */                                      \
  uint layer, layers, layer_bytes, per_window, delta; /* delta: bytes of region 0 in window 0 */   \
  uint blocks /* the pool's: a block past them is neither written nor read */
