/* difftx's C API: load Differential Transformer (and LLaMA-style) models, tokenize, score,
 * generate on the continuous-batching engine, train, convert and run the paper's analyses.
 *
 * Plain C11; the header compiles as C and as C++. Objects are opaque handles. Every call reports
 * failure by its return value (NULL, -1, INT32_MIN, as each function says), and then
 * difftx_last_error() gives the message. No C++ exception crosses this API and no error aborts
 * the process: bad arguments (NULL handles, negative sizes, ids outside the vocabulary, buffers
 * too small) are errors like any other.
 *
 * Threads: each function says what it allows. "Any thread" means concurrent calls are safe;
 * "one thread at a time per X" means calls on the same X must not overlap (calls on different
 * Xs may). Compute runs on OpenMP threads: OMP_NUM_THREADS, else every core.
 *
 * Strings are UTF-8 and NUL-terminated unless a length is given. Output buffers follow one rule
 * (the "buffer rule"): a function that writes a variable amount into a caller's buffer of
 * `capacity` elements returns the count written when it fits, -(the capacity needed) when it
 * does not (then the buffer holds nothing useful: call again with that capacity; capacity 0 with
 * a NULL buffer asks for the size), and INT32_MIN on an error. Text is NUL-terminated: its count
 * leaves the NUL out, the capacity needed counts it. */
#ifndef DIFFTX_DIFFTX_H
#define DIFFTX_DIFFTX_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define DIFFTX_API
#else
#define DIFFTX_API __attribute__((visibility("default")))
#endif

#define DIFFTX_VERSION_MAJOR 0
#define DIFFTX_VERSION_MINOR 6
#define DIFFTX_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version and errors ---------------------------------------------------------------------- */

/* "MAJOR.MINOR.PATCH" of the library. The ABI (this header's structs and functions) may change with
 * MAJOR, or, while MAJOR is 0, with MINOR: the shared library's SONAME carries MAJOR (libdifftx.so.0.MINOR
 * while MAJOR is 0), so a program built against another ABI does not load this one. Any thread. */
DIFFTX_API const char* difftx_version(void);

/* The message of the last call that failed on this thread ("" if none has). Valid until the next
 * failing call on the same thread. Any thread (the message is the calling thread's own). */
DIFFTX_API const char* difftx_last_error(void);

/* Frees a string the library allocated (difftx_analyze's results).
 * NULL is ignored. Any thread. */
DIFFTX_API void difftx_string_free(char* text);

/* ---- Models ---------------------------------------------------------------------------------- */

typedef struct difftx_model difftx_model;

/* Loads a model directory (difftx's own, a Hugging Face Llama / DiffLlama / Motif directory,
 * quantized or not), its tokenizer when it has one, generation_config.json's defaults and its
 * chat template. Matrices stay in the type the files hold, as `difftx generate` and `difftx
 * logits` load them. device: NULL or "cpu", "vulkan" (the best Vulkan device) or "vulkan:N"
 * (`difftx --version` lists them); a device that cannot be opened is an error, never a fall-back. A directory without a tokenizer loads; then only the calls that need text fail.
 * Returns NULL on error. Any thread. */
DIFFTX_API difftx_model* difftx_model_load(const char* dir, const char* device);

/* Frees the model. Engines created on it keep what they need and stay usable; free them too.
 * NULL is ignored. Not concurrently with any other call on the same model. */
DIFFTX_API void difftx_model_free(difftx_model* model);

/* Columns of the logits (config.json's vocab_size; a tokenizer may have fewer tokens), or -1 on
 * error. Any thread. */
DIFFTX_API int32_t difftx_vocab_size(const difftx_model* model);

/* Most tokens a sequence may hold (max_position_embeddings), or -1 on error. Any thread. */
DIFFTX_API int32_t difftx_context_length(const difftx_model* model);

/* The model's metadata as a JSON object: "path", "device", "variant", "num_parameters",
 * "config" (difftx's config.json), "tokenizer" ({"name", "vocab_size"} or null),
 * "chat_template" (true when the model has a usable one), "eos_ids" (the ids that end generation:
 * generation_config.json's and config.json's, or the tokenizer's end-of-text where they name
 * none) and "generation_defaults".
 * Written into `json` by the buffer rule. Any thread. */
DIFFTX_API int32_t difftx_model_metadata(const difftx_model* model, char* json, int32_t capacity);

/* ---- Tokens and scoring ---------------------------------------------------------------------- */

/* The token ids of text (a tokenizer.json matches special-token text, as transformers does;
 * difftx's tiktoken vocabularies read it as plain text). add_special != 0 adds the tokenizer's
 * template (Llama 3: BOS). Returns the count; if capacity is too small, -(count needed);
 * INT32_MIN on error (the model has no tokenizer, text is not UTF-8, capacity < 0, ids NULL with
 * capacity > 0). ids may be NULL with capacity 0 to ask for the count. Any thread. */
DIFFTX_API int32_t difftx_tokenize(const difftx_model* model, const char* text, int32_t add_special, int32_t* ids,
                                   int32_t capacity);

/* The bytes of n token ids, concatenated, into text by the buffer rule (the bytes of a character
 * split across ids may not be valid UTF-8 alone). INT32_MIN on error: no tokenizer, an id outside
 * the tokenizer's vocabulary, n < 0, ids NULL with n > 0. Any thread. */
DIFFTX_API int32_t difftx_detokenize(const difftx_model* model, const int32_t* ids, int32_t n, char* text,
                                     int32_t capacity);

/* The float32 logits of one full forward over ids[0..n): n * difftx_vocab_size(model) floats,
 * row-major (row t scores the token after ids[t]), bit for bit those of `difftx logits`. n must
 * be in [1, difftx_context_length]; every id in [0, difftx_vocab_size). Returns 0, or -1 on
 * error. Any thread (each call uses its own buffers). */
DIFFTX_API int32_t difftx_logits(difftx_model* model, const int32_t* ids, int32_t n, float* out);

/* ---- Chat templates -------------------------------------------------------------------------- */

typedef struct difftx_chat_message {
  const char* role;    /* "system", "user", "assistant", ... */
  const char* content;
} difftx_chat_message;

/* The prompt the model's chat template (tokenizer_config.json or chat_template.jinja) makes of
 * n messages, as transformers renders it; add_generation_prompt != 0 opens the assistant's turn.
 * Written into `text` by the buffer rule. INT32_MIN on error: no template, a message with a NULL
 * role or content, n < 1, or what the template raises.
 * Any thread. */
DIFFTX_API int32_t difftx_chat_template(const difftx_model* model, const difftx_chat_message* messages, int32_t n,
                                        int32_t add_generation_prompt, char* text, int32_t capacity);

/* ---- Generation ------------------------------------------------------------------------------ */

typedef struct difftx_engine difftx_engine;

/* Start from difftx_engine_default_options() and change the fields wanted: "(default ...)" is
 * what that function gives, and a zeroed struct is not the defaults (a 0 max_batch_tokens is an
 * error). */
typedef struct difftx_engine_options {
  const char* kv_dtype;      /* the KV cache: "bf16" (default; NULL too), "f32" or "int8" */
  int64_t kv_tokens;         /* KV pool capacity in tokens (whole blocks); 0: from kv_bytes */
  int64_t kv_bytes;          /* in bytes; 0 (and kv_tokens 0): max_position_embeddings tokens, <= 1 GiB */
  int64_t kv_block_tokens;   /* tokens per KV block, a multiple of 16 (default 32) */
  int64_t max_batch_tokens;  /* rows per engine step: decode rows and prompt chunks (default 512) */
  int64_t max_running;       /* sequences decoding at once (default 64) */
  int64_t max_queue;         /* requests waiting beyond those; more are refused (default 1024) */
  int64_t context;           /* most tokens of a sequence, prompt and reply; 0: max_position_embeddings;
                                at most what the KV pool holds of one sequence alone */
  int32_t prefix_cache;      /* nonzero: reuse the KV blocks of matching prompt prefixes (default 1) */
  /* Speculative decoding, as `difftx generate --draft`: NULL, "" or "none" none (default), "ngram"
   * (prompt lookup), or the directory of a smaller model with the model's vocabulary, loaded onto its
   * device. The text is the same as without a draft (greedy: bit-identical); only the speed changes. */
  const char* draft;
  int64_t draft_tokens;      /* tokens drafted per step, 1 to 64 (default 6; another count without a
                                draft is an error) */
} difftx_engine_options;

/* `difftx serve`'s engine defaults. Any thread. */
DIFFTX_API difftx_engine_options difftx_engine_default_options(void);

/* An engine on the model (continuous batching: requests share each step; a request's tokens are
 * the same alone or beside others). options NULL: the defaults. Returns NULL on error (an option
 * out of range names it). Any thread. */
DIFFTX_API difftx_engine* difftx_engine_create(difftx_model* model, const difftx_engine_options* options);

/* Ends every request still there with DIFFTX_FINISH_CANCELLED (their callbacks see it), stops
 * the engine's thread and frees the engine. NULL is ignored. Not concurrently with other calls on
 * the engine; from inside one of its callbacks it is an error (the engine is left as it was). */
DIFFTX_API void difftx_engine_free(difftx_engine* engine);

/* A bias added to one token's logit (OpenAI's logit_bias). */
typedef struct difftx_logit_bias {
  int32_t token;               /* in [0, difftx_vocab_size), each token at most once per request */
  float bias;                  /* in [-100, 100]: -100 bans the token, +100 all but forces it */
} difftx_logit_bias;

/* The server's sampling options (its `n` is n requests, choice i seeded seed + i). Start from
 * difftx_sampling_default_options() and change the fields wanted: a zeroed struct is not the
 * defaults (a 0 top_p is an error). */
typedef struct difftx_sampling_options {
  int64_t max_tokens;          /* tokens to generate at most */
  double temperature;          /* 0: greedy */
  int64_t top_k;               /* keep the k most likely tokens; 0: all */
  double top_p;                /* keep the most likely tokens holding p of the mass; 1: all */
  double min_p;                /* keep tokens at least min_p times as likely as the most likely; 0: all */
  uint64_t seed;               /* the same seed gives the same tokens */
  double presence_penalty;     /* OpenAI's penalties, each in [-2, 2]; 0: off */
  double frequency_penalty;
  double repetition_penalty;   /* transformers': the logit of a token of the prompt or the output is
                                  divided by it where positive, multiplied where not; in (0, 10], 1: off */
  const char* const* stop;     /* n_stop strings that end the text (not included), or NULL */
  int32_t n_stop;              /* in [0, 16] */
  int32_t logprobs;            /* nonzero: events carry the token's log-probability */
  int32_t top_logprobs;        /* alternatives per token, [0, 20] (implies logprobs) */
  /* n_logit_bias biases added to their tokens' logits before the penalties and everything after
   * (drafts of a draft model see them too), or NULL; n_logit_bias >= 0 (default 0). */
  const difftx_logit_bias* logit_bias;
  int32_t n_logit_bias;
  /* Nonzero (default 1): the special tokens the model writes (<|im_start|>, reserved tokens) are
   * no text, as the server leaves them out (vLLM's skip_special_tokens); a chat reply keeps its
   * reasoning block's markers. 0: they are text. Their events still carry the ids either way. */
  int32_t skip_special_tokens;
  /* vLLM's: n_stop_token_ids ids (each in [0, difftx_vocab_size)) that end the text too where drawn,
   * writing none themselves, or NULL; n_stop_token_ids in [0, 64] (default 0). */
  const int32_t* stop_token_ids;
  int32_t n_stop_token_ids;
  int32_t ignore_eos;                  /* nonzero: the model's end-of-sequence ids (and a chat template's
                                          end of turn) do not stop it (default 0) */
  int32_t include_stop_str_in_output;  /* nonzero: the text ends after a stop string, not before (default 0) */
  int64_t min_tokens;                  /* no stop token or stop string before this many tokens, in
                                          [0, max_tokens] (default 0) */
  /* vLLM's: n_bad_words words (non-empty UTF-8) never written whole: the token that would complete
   * one (alone, or after a space) is not drawn; or NULL. n_bad_words in [0, 64] (default 0). Needs
   * the model's tokenizer. */
  const char* const* bad_words;
  int32_t n_bad_words;
} difftx_sampling_options;

/* Sampling defaults: the model directory's generation_config.json where it gives them, else
 * `difftx generate`'s (128 tokens, temperature 0.8, top_k 0, top_p 1, seed 1); model NULL: the
 * latter. Any thread. */
DIFFTX_API difftx_sampling_options difftx_sampling_default_options(const difftx_model* model);

enum {
  DIFFTX_FINISH_NONE = 0,       /* more events follow */
  DIFFTX_FINISH_STOP = 1,       /* an end-of-sequence id or a stop string */
  DIFFTX_FINISH_LENGTH = 2,     /* max_tokens, or the context (at most the KV pool's) is full */
  DIFFTX_FINISH_CANCELLED = 3,  /* difftx_engine_cancel, or the engine was freed */
  DIFFTX_FINISH_ERROR = 4       /* `error` says why */
};

/* One event of a request: a generated token (and the text it completes), or the end. Every
 * pointer is valid during the callback only. */
typedef struct difftx_token_event {
  int64_t request;             /* the id difftx_engine_submit* returned */
  int32_t token;               /* the generated id, or -1 (the last event may carry none) */
  const char* text;            /* text this token completes, text_len bytes (not NUL-terminated); a
                                  multi-byte character or a possible stop string is held back
                                  until settled, so the texts of all events concatenate to the reply */
  int32_t text_len;
  float logprob;               /* log p(token), with logprobs */
  const int32_t* top_ids;      /* the n_top most likely ids, most likely first, with top_logprobs */
  const float* top_logprobs;
  int32_t n_top;
  int32_t finish;              /* DIFFTX_FINISH_*: nonzero on the request's last event */
  const char* error;           /* the message, for DIFFTX_FINISH_ERROR; else "" */
  int64_t prompt_tokens, generated_tokens, cached_tokens;  /* on the last event (prompt_tokens and cached_tokens
                                                              on the first too); generated_tokens counts a stop
                                                              token that ended it, as OpenAI's usage does */
} difftx_token_event;

/* Called on the thread that runs the engine's steps, in order, never after the request's last
 * event; every request that was queued gets a last event, also when the engine is freed. Keep it
 * short. It may submit, cancel and read stats on the same engine; stepping, starting or freeing
 * it from inside a callback is an error. */
typedef void (*difftx_token_callback)(const difftx_token_event* event, void* user_data);

/* Queues a request and returns its id (> 0), or -1 on error (then nothing was queued and the
 * callback is never called; a full queue is an error too). The prompt is framed as `difftx
 * generate` frames it (difftx models: after an end-of-text token; Hugging Face models: the
 * tokenizer's BOS), and generation stops at the model's end-of-sequence ids. options NULL: the
 * model's defaults. Needs the model's tokenizer. Any thread. */
DIFFTX_API int64_t difftx_engine_submit(difftx_engine* engine, const char* prompt,
                                        const difftx_sampling_options* options, difftx_token_callback callback,
                                        void* user_data);

/* The same with the prompt as n token ids, taken as they are (no frame); generation stops at the
 * model's end-of-sequence ids. Events carry text only when the model has a tokenizer. Any thread. */
DIFFTX_API int64_t difftx_engine_submit_ids(difftx_engine* engine, const int32_t* ids, int32_t n,
                                            const difftx_sampling_options* options, difftx_token_callback callback,
                                            void* user_data);

/* The same with n chat messages through the model's chat template, the assistant's turn opened
 * (as `difftx generate --chat` and the server's chat completions); the template's end-of-turn
 * token stops it too. Any thread. */
DIFFTX_API int64_t difftx_engine_submit_chat(difftx_engine* engine, const difftx_chat_message* messages, int32_t n,
                                             const difftx_sampling_options* options, difftx_token_callback callback,
                                             void* user_data);

/* Ends the request at the next step (DIFFTX_FINISH_CANCELLED); an id that is finished or unknown
 * is ignored. Returns 0, or -1 on error (engine NULL, request < 1). Any thread, callbacks included. */
DIFFTX_API int32_t difftx_engine_cancel(difftx_engine* engine, int64_t request);

/* Runs one engine step on the calling thread (the callbacks run on it). Returns 1 when requests
 * remain, 0 when the engine is idle, -1 on error: the engine runs its own thread
 * (difftx_engine_start), another thread is stepping it, or the step failed. One thread at a time
 * per engine (a second is refused). */
DIFFTX_API int32_t difftx_engine_step(difftx_engine* engine);

/* Runs steps on the calling thread until no request is waiting or running. Returns 0, or -1 on
 * error. As difftx_engine_step. */
DIFFTX_API int32_t difftx_engine_run(difftx_engine* engine);

/* Starts a background thread that runs steps whenever there is work (a server's way); the
 * callbacks then run on it. Stopped by difftx_engine_free. Returns 0, or -1 on error. One thread
 * at a time per engine. */
DIFFTX_API int32_t difftx_engine_start(difftx_engine* engine);

typedef struct difftx_engine_stats {
  int64_t waiting, running;                             /* requests */
  int64_t kv_blocks, kv_blocks_used, kv_blocks_cached;  /* used: held by a sequence */
  int64_t kv_block_tokens;
  int64_t prefix_lookup_tokens, prefix_hit_tokens;      /* prompt tokens looked up / found cached */
  int64_t prompt_tokens, generated_tokens;              /* computed / drawn so far (a stop token too) */
  int64_t preemptions, steps;
  int64_t finished[5];                                  /* requests ended, by DIFFTX_FINISH_* */
  int64_t draft_tokens, draft_accepted;                 /* drafted tokens verified / of those accepted */
} difftx_engine_stats;

/* A snapshot of the engine's counters into *stats. Returns 0, or -1 on error. Any thread,
 * callbacks included. */
DIFFTX_API int32_t difftx_engine_get_stats(const difftx_engine* engine, difftx_engine_stats* stats);

/* ---- Training -------------------------------------------------------------------------------- */

/* Start from difftx_train_default_options() and change the fields wanted. */
typedef struct difftx_train_options {
  const char* config;         /* a config.json (configs/<preset>/<variant>.json); NULL with init */
  const char* init;           /* a model directory whose weights the run starts from, or NULL */
  const char* data;           /* a directory `difftx prepare` made */
  const char* out;            /* the run directory: checkpoints/, metrics.jsonl */
  int64_t steps, seq_len, micro_batch, batch_tokens;  /* batch_tokens 0: one micro-batch */
  double lr, min_lr_ratio;
  int64_t warmup;
  const char* schedule;       /* "cosine", "linear" or "constant" */
  double weight_decay, grad_clip, beta1, beta2;
  uint64_t seed;
  const char* mix;            /* "niah=F,mqar=G" retrieval rows, or NULL */
  int64_t eval_every, eval_batches, checkpoint_every;
  int32_t keep_checkpoints;
  int64_t log_every;
  int32_t resume;             /* nonzero: continue the run in `out` from its latest checkpoint */
  int32_t quiet;              /* nonzero: no progress lines on stdout (metrics.jsonl is written) */
} difftx_train_options;

/* `difftx train`'s defaults (config, init, data and out NULL). Any thread. */
DIFFTX_API difftx_train_options difftx_train_default_options(void);

typedef struct difftx_train_step {
  int64_t step, steps;         /* this step, of the run's total */
  double loss, lr, grad_norm, tokens_per_second;
  double val_loss;             /* NaN unless validation ran after this step */
  int32_t logged;              /* a progress-line step (log_every, or the last) */
} difftx_train_step;

/* Called after every step on the training thread; returning 0 ends the run after a checkpoint
 * of that step. */
typedef int32_t (*difftx_train_callback)(const difftx_train_step* step, void* user_data);

typedef struct difftx_train_summary {
  int64_t steps_done;
  double train_loss, val_loss;  /* val_loss NaN when never validated */
  double tokens_per_second, mfu;
  int32_t stopped;              /* the callback ended the run */
} difftx_train_summary;

/* Trains as `difftx train` does, in this process (one rank). callback and summary may be NULL.
 * Returns 0, or -1 on error (a diverged run keeps its last good checkpoint). Any thread; runs
 * sharing an `out` directory are refused (the run lock). */
DIFFTX_API int32_t difftx_train(const difftx_train_options* options, difftx_train_callback callback,
                                void* user_data, difftx_train_summary* summary);

/* ---- Conversion ------------------------------------------------------------------------------ */

/* Writes the model directory `model_dir` as `difftx convert` does into out_dir (which must not
 * exist, or be empty): to "difftx" (NULL: the default), "hf" or "gguf", weights in dtype "f32"
 * (NULL), "bf16", "f16", "q8_0", "q4_0" or "q4_k", the embedding and LM head in head_dtype (NULL:
 * the format's choice). Returns 0, or -1 on error (leaving no out_dir it made). Any thread. */
DIFFTX_API int32_t difftx_convert(const char* model_dir, const char* out_dir, const char* to, const char* dtype,
                                  const char* head_dtype);

/* ---- Analyses -------------------------------------------------------------------------------- */

/* Runs one of the paper's analyses on the model with a prepared dataset (`difftx prepare`) and
 * returns its results.json object as JSON text (docs/EXPERIMENTS.md), to free with
 * difftx_string_free; NULL on error. The model runs as loaded (`difftx analyze` widens stored
 * weights to F32 first: the same for F32 models, such as difftx's checkpoints).
 *   analysis  options (a JSON object text, or NULL for the defaults; unknown keys are errors)
 *   "niah"      contexts, needles, queried (int lists), depths (numbers in [0, 1]), samples, seed,
 *               value_digits, split ("val" or "train")              -> results.json's "niah"
 *   "mqar"      pairs, queries, samples, seed                        -> "mqar"
 *   "attention" context, needles, depths, per_depth, seed, map_layer, map_head (-1: the mean)
 *                                                     -> {"attention_allocation", "attention_map"}
 *   "outliers"  tokens, seq_len, micro_batch                         -> "outliers"
 *   "quant"     bits (0 or 2..16 each), seq_len, micro_batch, max_batches -> "quantization"
 *   "eval"      seq_len, micro_batch, max_batches -> {"val_loss", "perplexity", "tokens", "batches", "seconds"}
 * Any thread. */
DIFFTX_API char* difftx_analyze(difftx_model* model, const char* analysis, const char* data_dir,
                                const char* options_json);

#ifdef __cplusplus
}
#endif

#endif /* DIFFTX_DIFFTX_H */
