// `difftx analyze TARGET`: the paper's analyses of a trained model (targets in analyze_*.cpp).
#include "cli/analyze_targets.h"
#include "cli/command.h"

namespace difftx::cli {

DIFFTX_COMMAND("analyze", "the paper's analyses of a trained model: retrieval, attention noise, outliers, quantization",
               "  difftx analyze niah --model DIR --data DIR [--contexts 256,512] [--needles 1,2,4,6] [--queried 1,2]\n"
               "                      [--depths 0,0.25,0.5,0.75,1] [--samples N] [--seed S] [--value-digits D]\n"
               "                      [--split val] [--json FILE] [--quiet]\n"
               "      multi-needle retrieval (paper Table 2): greedy exact-match accuracy by context, needles N,\n"
               "      queried R and depth; haystacks from the --split of --data (default val: text unseen in training)\n"
               "  difftx analyze mqar --model DIR --data DIR [--pairs P] [--queries Q] [--samples N] [--seed S]\n"
               "                      [--json FILE]\n"
               "      multi-query associative recall (Zoology): answer accuracy and loss; --data gives the tokenizer\n"
               "  difftx analyze attention --model DIR --data DIR [--context T] [--needles N] [--depths 0,0.25,0.5,0.75,1]\n"
               "                 [--per-depth N] [--seed N] [--map-layer L] [--map-head H] [--json FILE]\n"
               "      attention on the answer vs the rest of the context (Table 3) on NIAH prompts, and\n"
               "      one prompt's normalised attention row (Figure 1)\n"
               "  difftx analyze outliers --model DIR --data DIR [--tokens N] [--seq-len T] [--micro-batch B]\n"
               "                 [--json FILE] [--quiet]\n"
               "      top-1/2/3 and median of |attention logits| and |hidden states| over val tokens (Table 5)\n"
               "  difftx analyze quant --model DIR --data DIR [--bits 0,16,8,6,4] [--seq-len T] [--micro-batch B]\n"
               "                 [--max-batches N] [--json FILE] [--quiet]\n"
               "      val loss with attention logits absmax fake-quantized to each bit width (Figure 8)\n"
               "  --json FILE writes the results-schema object(s) of the target (docs/EXPERIMENTS.md).",
               run_targets("analyze", {{"niah", analyze_niah},
                                       {"mqar", analyze_mqar},
                                       {"attention", analyze_attention},
                                       {"outliers", analyze_outliers},
                                       {"quant", analyze_quant}}));

}  // namespace difftx::cli
