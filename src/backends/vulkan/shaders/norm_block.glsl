// How the row norms (rmsnorm, layernorm, polynorm) read a row: a workgroup of WG threads a row,
// thread t taking elements t + WG j of each block of BLOCK = WG * PER, a block's PER loads issued
// before any is used (on a GPU a block costs one wait for memory, not PER). The row's last block
// (its only one when n <= BLOCK) stays in registers, its parameters loaded beside it, for the pass
// that writes the output; earlier blocks are read again. shaders.cmake defines WG and PER for
// each variant, and the host picks the variant by the row's width alone (ops_common.h).
#if !defined(WG) || !defined(PER)
#error WG (threads a row) and PER (elements a thread loads at once) are defined by shaders.cmake
#endif
#define BLOCK (WG * PER)
layout(local_size_x = WG) in;

// The first element of a row's last block.
uint last_block(uint n) { return (n - 1u) / BLOCK * BLOCK; }
