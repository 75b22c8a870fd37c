"""A notebook-style tour of difftx from Python: load a DIFF model and its baseline, plot one
needle-in-a-haystack prompt's attention row of each (the paper's Figure 1) into a PNG, and
print a table of the analyses.

    python3 docs/python_example.py --diff RUN/runs/diff/checkpoints/step_N \
        --baseline RUN/runs/baseline/checkpoints/step_N --data data/default --out attention.png

(the directories of a `scripts/quickstart` or `difftx experiment compare` run; tests run it on
small models in python/tests/test_example.py).
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import numpy as np

import difftx

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--diff", required=True, help="a DIFF model directory")
parser.add_argument("--baseline", required=True, help="the baseline's model directory")
parser.add_argument("--data", required=True, help="prepared data (difftx prepare): haystacks and val text")
parser.add_argument("--out", default="attention.png", help="the PNG to write")
parser.add_argument("--context", type=int, default=256, help="tokens per NIAH prompt")
args = parser.parse_args()

models = {"diff": difftx.load(args.diff), "baseline": difftx.load(args.baseline)}
for name, model in models.items():
    print(f"{name}: {model.variant}, {model.num_parameters / 1e6:.2f}M parameters")

# One NIAH prompt (the same for both models: the data's tokenizer and the seed fix it), and the
# row of its query position, averaged over the heads of the last layer.
fig, axes = plt.subplots(1, 2, figsize=(12, 3.5), sharey=True)
rows = {}
for ax, (name, model) in zip(axes, models.items()):
    analysis = difftx.attention(model, args.data, context=args.context, per_depth=1)
    prompt = analysis["attention_map"]
    layer = model.config["num_hidden_layers"] - 1
    heads = model.config["num_attention_heads"]
    row = np.mean([difftx.attention_map(model, prompt["ids"], layer, h, prompt["query_position"])
                   for h in range(heads)], axis=0)
    rows[name] = (analysis, row)
    ax.bar(np.arange(len(row)), row, width=1.0, color="tab:blue" if name == "diff" else "tab:gray")
    begin, end = prompt["answer_span"]
    ax.axvspan(begin - 0.5, end - 0.5, color="tab:red", alpha=0.3, label="answer")
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_title(f"{name} ({model.variant}), layer {layer}, mean over heads")
    ax.set_xlabel("key position")
    ax.legend()
axes[0].set_ylabel("normalised attention")
fig.tight_layout()
fig.savefig(args.out, dpi=100)
print(f"wrote {args.out}")

# The analyses, one line per model.
print(f"\n{'model':<10} {'answer':>8} {'noise':>8} {'max |logit|':>12} {'max |hidden|':>13} {'val loss':>9} "
      f"{'4-bit dloss':>12}")
for name, model in models.items():
    allocation = rows[name][0]["attention_allocation"]["mean"]
    outliers = difftx.outliers(model, args.data, tokens=4 * args.context, seq_len=args.context, micro_batch=4)
    quant = {p["bits"]: p["val_loss"] for p in difftx.quant(model, args.data, bits=[0, 4], seq_len=args.context,
                                                             micro_batch=4, max_batches=2)}
    print(f"{name:<10} {allocation['answer']:>8.4f} {allocation['noise']:>8.4f} "
          f"{outliers['attention_logits']['top1']:>12.2f} {outliers['hidden_states']['top1']:>13.2f} "
          f"{quant[0]:>9.4f} {quant[4] - quant[0]:>+12.4f}")
