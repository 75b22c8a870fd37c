// The C API's training and conversion (include/difftx/difftx.h).
#include <cmath>

#include "api/c_api_internal.h"
#include "api/training.h"
#include "data/tasks/mixture_spec.h"
#include "model/model_output.h"

using namespace difftx;
using namespace difftx::api;
using namespace difftx::train;

namespace {

// difftx_train_options' numeric fields and the TrainOptions' fields they stand for, each pair given to f.
template <typename C, typename Cpp, typename F>
void train_fields(C& c, Cpp& o, F f) {
  f(c.steps, o.steps), f(c.seq_len, o.seq_len), f(c.micro_batch, o.micro_batch), f(c.batch_tokens, o.batch_tokens);
  f(c.lr, o.lr), f(c.min_lr_ratio, o.min_lr_ratio), f(c.warmup, o.warmup_steps);
  f(c.weight_decay, o.adamw.weight_decay), f(c.grad_clip, o.adamw.grad_clip);
  f(c.beta1, o.adamw.beta1), f(c.beta2, o.adamw.beta2), f(c.seed, o.seed);
  f(c.eval_every, o.eval_every), f(c.eval_batches, o.eval_batches), f(c.checkpoint_every, o.checkpoint_every);
  f(c.keep_checkpoints, o.keep_checkpoints), f(c.log_every, o.log_every), f(c.resume, o.resume), f(c.quiet, o.quiet);
}

}  // namespace

extern "C" {

difftx_train_options difftx_train_default_options(void) {
  const TrainOptions d;
  difftx_train_options c{};
  c.schedule = "cosine";
  train_fields(c, d, to_c);
  return c;
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
    o.schedule = decay_shape_from_name(required(c.schedule, "schedule"));
    if (c.mix) o.mixture = retrieval::parse_mixture(c.mix, OptionSpelling::field);
    train_fields(c, o, from_c);
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
        model::model_output(required(out_dir, "out_dir"), to ? to : "difftx", dtype ? dtype : "f32", head,
                            OptionSpelling::field);
    model::convert_model(required(model_dir, "model_dir"), out);
    return 0;
  });
}

}  // extern "C"
