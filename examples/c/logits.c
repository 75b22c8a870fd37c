/* The logits of a full forward over token ids, through difftx's C API.
 *
 *   logits MODEL_DIR OUT.f32 ID [ID ...]
 *
 * writes float32 [n, vocab] (row t scores the token after ID t, native byte order) to OUT.f32 and
 * prints each row's most likely next id. Build: cc logits.c $(pkg-config --cflags --libs difftx) */
#include <stdio.h>
#include <stdlib.h>

#include <difftx/difftx.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL_DIR OUT.f32 ID [ID ...]\n", argv[0]);
    return 2;
  }
  difftx_model* model = difftx_model_load(argv[1], "cpu");
  if (!model) {
    fprintf(stderr, "logits: %s\n", difftx_last_error());
    return 1;
  }
  const int32_t n = argc - 3, vocab = difftx_vocab_size(model);
  int32_t* ids = malloc(sizeof(int32_t) * (size_t)n);
  float* logits = malloc(sizeof(float) * (size_t)n * (size_t)vocab);
  int status = 1;
  if (!ids || !logits) {
    fprintf(stderr, "logits: out of memory\n");
    goto done;
  }
  for (int32_t i = 0; i < n; ++i) ids[i] = (int32_t)strtol(argv[3 + i], NULL, 10);
  if (difftx_logits(model, ids, n, logits) != 0) {
    fprintf(stderr, "logits: %s\n", difftx_last_error());
    goto done;
  }
  FILE* out = fopen(argv[2], "wb");
  if (!out || fwrite(logits, sizeof(float) * (size_t)vocab, (size_t)n, out) != (size_t)n || fclose(out) != 0) {
    fprintf(stderr, "logits: cannot write %s\n", argv[2]);
    goto done;
  }
  for (int32_t t = 0; t < n; ++t) {
    int32_t best = 0;
    for (int32_t v = 1; v < vocab; ++v)
      if (logits[(size_t)t * (size_t)vocab + (size_t)v] > logits[(size_t)t * (size_t)vocab + (size_t)best]) best = v;
    printf("%d -> %d\n", ids[t], best);
  }
  status = 0;
done:
  free(ids);
  free(logits);
  difftx_model_free(model);
  return status;
}
