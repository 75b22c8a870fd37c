/* Load a model, tokenize a prompt and stream a greedy continuation on difftx's engine, through
 * the C API.
 *
 *   generate MODEL_DIR PROMPT [MAX_TOKENS]
 *
 * prints the continuation as the engine makes it (as `difftx generate --temperature 0` does,
 * without echoing the prompt), then the request's token counts on stderr.
 * Build: cc generate.c $(pkg-config --cflags --libs difftx) */
#include <stdio.h>
#include <stdlib.h>

#include <difftx/difftx.h>

/* Each event: the text its token completes. The last one says how the request ended. */
static void on_token(const difftx_token_event* event, void* user_data) {
  int* finish = user_data;
  fwrite(event->text, 1, (size_t)event->text_len, stdout);
  fflush(stdout);
  if (event->finish != DIFFTX_FINISH_NONE) {
    *finish = event->finish;
    if (event->finish == DIFFTX_FINISH_ERROR) fprintf(stderr, "generate: %s\n", event->error);
    fprintf(stderr, "prompt %lld tokens, generated %lld\n", (long long)event->prompt_tokens,
            (long long)event->generated_tokens);
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL_DIR PROMPT [MAX_TOKENS]\n", argv[0]);
    return 2;
  }
  difftx_model* model = difftx_model_load(argv[1], NULL);
  if (!model) {
    fprintf(stderr, "generate: %s\n", difftx_last_error());
    return 1;
  }
  /* Tokenizing: a first call asks for the count (the engine tokenizes the prompt itself; this
     shows the buffer rule). */
  const int32_t asked = difftx_tokenize(model, argv[2], 0, NULL, 0);
  if (asked == INT32_MIN) { /* an error; else -(the count), or 0 for an empty prompt */
    fprintf(stderr, "generate: %s\n", difftx_last_error());
    difftx_model_free(model);
    return 1;
  }
  fprintf(stderr, "the prompt is %d tokens\n", -asked);

  difftx_engine* engine = difftx_engine_create(model, NULL);
  difftx_sampling_options options = difftx_sampling_default_options(model);
  options.temperature = 0; /* greedy */
  if (argc > 3) options.max_tokens = atoi(argv[3]);
  int finish = DIFFTX_FINISH_NONE;
  if (!engine || difftx_engine_submit(engine, argv[2], &options, on_token, &finish) < 0 ||
      difftx_engine_run(engine) != 0) {
    fprintf(stderr, "generate: %s\n", difftx_last_error());
    difftx_engine_free(engine);
    difftx_model_free(model);
    return 1;
  }
  printf("\n");
  difftx_engine_free(engine);
  difftx_model_free(model);
  return finish == DIFFTX_FINISH_ERROR;
}
