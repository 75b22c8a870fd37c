// Shared by every shader: the large-grid index and the conversions of stored elements.
#extension GL_EXT_control_flow_attributes : enable

// Dispatches of more groups than one grid dimension holds come as (x, y) grids; this is the
// group's index in the flattened grid (the host passes how many are real).
uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

float bf16_low(uint v) { return uintBitsToFloat(v << 16); }            // element in bits 0-15
float bf16_high(uint v) { return uintBitsToFloat(v & 0xffff0000u); }   // element in bits 16-31

// Round to nearest even into BF16 (io/float16.h float_to_bf16): NaN stays a quiet NaN.
uint float_to_bf16(float x) {
  uint b = floatBitsToUint(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) return ((b >> 16) | 0x40u) & 0xffffu;
  return ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16) & 0xffffu;
}

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }
