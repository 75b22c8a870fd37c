// The C API's training and conversion (include/difftx/difftx.h).
#include <cmath>

#include "api/c_api_internal.h"
#include "api/training.h"
#include "data/tasks/mixture_spec.h"
#include "model/model_output.h"

using namespace difftx;
using namespace difftx::api;
using namespace difftx::train;

extern "C" {

difftx_train_options difftx_train_default_options(void) {
  const TrainOptions d;
  return difftx_train_options{nullptr, nullptr, nullptr, nullptr, d.steps, d.seq_len, d.micro_batch, d.batch_tokens,
                              d.lr, d.min_lr_ratio, d.warmup_steps, "cosine", d.adamw.weight_decay,
                              d.adamw.grad_clip, d.adamw.beta1, d.adamw.beta2, d.seed, nullptr, d.eval_every,
                              d.eval_batches, d.checkpoint_every, d.keep_checkpoints, d.log_every, 0, 0};
}

int32_t difftx_train(const difftx_train_options* options, difftx_train_callback callback, void* user_data,
                     difftx_train_summary* summary) {
  return guard<int32_t>(-1, [&] {
    DIFFTX_CHECK(options != nullptr, "difftx_train: options is null");
    const difftx_train_options& c = *options;
    TrainOptions o;
    if (c.config) o.config_path = c.config;
    if (c.init) o.init_dir = c.init;
    o.data_dir = required(c.data, "data");
    o.out_dir = required(c.out, "out");
    o.steps = c.steps;
    o.seq_len = c.seq_len;
    o.micro_batch = c.micro_batch;
    o.batch_tokens = c.batch_tokens;
    o.lr = c.lr;
    o.min_lr_ratio = c.min_lr_ratio;
    o.warmup_steps = c.warmup;
    o.schedule = decay_shape_from_name(required(c.schedule, "schedule"));
    o.adamw.weight_decay = c.weight_decay;
    o.adamw.grad_clip = c.grad_clip;
    o.adamw.beta1 = c.beta1;
    o.adamw.beta2 = c.beta2;
    o.seed = c.seed;
    if (c.mix) o.mixture = retrieval::parse_mixture(c.mix);
    o.eval_every = c.eval_every;
    o.eval_batches = c.eval_batches;
    o.checkpoint_every = c.checkpoint_every;
    o.keep_checkpoints = c.keep_checkpoints;
    o.log_every = c.log_every;
    o.resume = c.resume != 0;
    o.quiet = c.quiet != 0;
    bool stopped = false;
    if (callback)
      o.on_step = [&](const StepReport& r) {
        const difftx_train_step step{r.step, r.steps, r.loss, r.lr, r.grad_norm, r.tokens_per_second, r.val_loss,
                                     r.logged ? 1 : 0};
        stopped = callback(&step, user_data) == 0;
        return !stopped;
      };
    const TrainSummary s = train_in_process(o);
    if (summary)
      *summary = difftx_train_summary{s.steps_done, s.last_train_loss, s.last_val_loss, s.tokens_per_second, s.mfu,
                                      stopped ? 1 : 0};
    return 0;
  });
}

int32_t difftx_convert(const char* model_dir, const char* out_dir, const char* to, const char* dtype,
                       const char* head_dtype) {
  return guard<int32_t>(-1, [&] {
    const std::optional<std::string> head = head_dtype ? std::optional<std::string>(head_dtype) : std::nullopt;
    const model::ModelOutput out =
        model::model_output(required(out_dir, "out_dir"), to ? to : "difftx", dtype ? dtype : "f32", head);
    model::convert_model(required(model_dir, "model_dir"), out);
    return 0;
  });
}

}  // extern "C"
