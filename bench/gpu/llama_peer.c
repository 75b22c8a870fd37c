/* llama.cpp's Vulkan build as difftx's GPU peer (bench/gpu/run.sh): a small driver over llama.cpp's
 * C API (llama.h of the release node-llama-cpp ships, built by bench/gpu/llama_peer.sh against the
 * prebuilt libraries of npm @node-llama-cpp/linux-x64-vulkan), every layer on the GPU. One JSON line
 * on stdout.
 *   llama_peer MODEL.gguf time PROMPT NEW REPEATS
 *       a PROMPT-token prefill, then NEW greedy decode steps; best of REPEATS
 *   llama_peer MODEL.gguf streams PROMPT NEW SEQUENCES
 *       SEQUENCES sequences, each a PROMPT-token prompt, then NEW steps of one token per sequence in
 *       one batch: the aggregate decode tokens/s
 * The backends (libggml-vulkan.so, a CPU one) are loaded from the driver's own directory. A CPU
 * Vulkan device (lavapipe) is used only with GGML_VK_VISIBLE_DEVICES=0. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "llama.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void quiet(enum ggml_log_level level, const char* text, void* user) {
  (void)user;
  if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static int fail(const char* what) {
  fprintf(stderr, "llama_peer: %s\n", what);
  return 1;
}

static llama_token argmax(struct llama_context* ctx, int32_t i, int32_t n_vocab) {
  const float* logits = llama_get_logits_ith(ctx, i);
  llama_token best = 0;
  for (llama_token t = 1; t < n_vocab; ++t)
    if (logits[t] > logits[best]) best = t;
  return best;
}

/* Prompt ids spread over the vocabulary, away from the special tokens at its ends. */
static llama_token prompt_token(int64_t i, int32_t n_vocab) {
  return (llama_token)(100 + (i * 7919) % (n_vocab - 300));
}

int main(int argc, char** argv) {
  if (argc != 6 || (strcmp(argv[2], "time") != 0 && strcmp(argv[2], "streams") != 0))
    return fail("usage: llama_peer MODEL.gguf time PROMPT NEW REPEATS | streams PROMPT NEW SEQUENCES");
  const int streams = strcmp(argv[2], "streams") == 0;
  const int prompt = atoi(argv[3]), decode = atoi(argv[4]), count = atoi(argv[5]);
  if (prompt < 1 || prompt > 65536 || decode < 1 || decode > 65536 || count < 1 || count > 1024)
    return fail("PROMPT and NEW must be in [1, 65536], REPEATS / SEQUENCES in [1, 1024]");
  const int sequences = streams ? count : 1, repeats = streams ? 1 : count;

  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return fail("cannot find its own directory");
  self[n] = 0;
  *strrchr(self, '/') = 0;
  llama_log_set(quiet, NULL);
  ggml_backend_load_all_from_path(self);
  llama_backend_init();
  const char* device = NULL; /* the GPU every layer goes to; none is an error, never the CPU instead */
  for (size_t i = 0; i < ggml_backend_dev_count() && !device; ++i)
    if (ggml_backend_dev_type(ggml_backend_dev_get(i)) == GGML_BACKEND_DEVICE_TYPE_GPU)
      device = ggml_backend_dev_description(ggml_backend_dev_get(i));
  if (!device) return fail("no Vulkan GPU device (a CPU one needs GGML_VK_VISIBLE_DEVICES=0)");

  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 999;
  struct llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return fail("cannot load the model");
  const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)(sequences * (prompt + decode + 16));
  cp.n_batch = cp.n_ubatch = (uint32_t)(prompt > sequences ? prompt : sequences);
  if (cp.n_ubatch > 512) cp.n_ubatch = 512;
  cp.n_seq_max = (uint32_t)sequences;
  cp.kv_unified = 1;
  cp.no_perf = 1;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return fail("cannot create a context");
  struct llama_batch batch = llama_batch_init(prompt > sequences ? prompt : sequences, 0, 1);

  double best_prefill = 0, best_decode = 0;
  for (int r = 0; r <= repeats; ++r) { /* round 0 warms up */
    llama_memory_clear(llama_get_memory(ctx), 1);
    llama_token next[1024];
    double prefill_s = 0;
    for (int s = 0; s < sequences; ++s) {
      batch.n_tokens = prompt;
      for (int i = 0; i < prompt; ++i) {
        batch.token[i] = prompt_token(i + 31 * s, n_vocab);
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = s;
        batch.logits[i] = i == prompt - 1;
      }
      const double t0 = now();
      if (llama_decode(ctx, batch) != 0) return fail("llama_decode failed (prefill)");
      llama_synchronize(ctx);
      prefill_s += now() - t0;
      next[s] = argmax(ctx, prompt - 1, n_vocab);
    }
    const double t1 = now();
    for (int step = 0; step < decode; ++step) {
      batch.n_tokens = sequences;
      for (int s = 0; s < sequences; ++s) {
        batch.token[s] = next[s];
        batch.pos[s] = prompt + step;
        batch.n_seq_id[s] = 1;
        batch.seq_id[s][0] = s;
        batch.logits[s] = 1;
      }
      if (llama_decode(ctx, batch) != 0) return fail("llama_decode failed (decode)");
      for (int s = 0; s < sequences; ++s) next[s] = argmax(ctx, s, n_vocab);
    }
    const double decode_s = now() - t1;
    if (r == 0) continue;
    const double p = (double)prompt * sequences / prefill_s, d = (double)decode * sequences / decode_s;
    if (p > best_prefill) best_prefill = p;
    if (d > best_decode) best_decode = d;
  }
  if (streams)
    printf(
        "{\"engine\":\"llama.cpp "
        "vulkan\",\"device\":\"%s\",\"sequences\":%d,\"prompt\":%d,\"decode\":%d,\"aggregate_decode_tok_s\":%.2f}\n",
        device, sequences, prompt, decode, best_decode);
  else
    printf(
        "{\"engine\":\"llama.cpp "
        "vulkan\",\"device\":\"%s\",\"prompt\":%d,\"decode\":%d,\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f}\n",
        device, prompt, decode, best_prefill, best_decode);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
