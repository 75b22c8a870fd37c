// A row's split-K chunk in decode attention (paged_attention.comp, paged_merge.comp;
// ops_attention.cpp): the smallest p.min_chunk * 2^k that covers the row's positions
// (its window's, when windowed) in at most p.max_items chunks. A short row gets many small chunks,
// so many workgroups share it; a long one at most max_items of them, so its partial results stay
// bounded. A function of the row's length alone, so a row's chunks, and bits, are too. The
// including shader's push block has min_chunk, max_items and window.
uint decode_chunk(uint length) {
  const uint span = p.window > 0u ? min(length, p.window) : length;
  uint chunk = p.min_chunk;
  while ((span + chunk - 1u) / chunk > p.max_items) chunk *= 2u;
  return chunk;
}
// Where a row's positions start: those before its window's are not its.
uint window_start(uint length) { return p.window > 0u && length > p.window ? length - p.window : 0u; }
