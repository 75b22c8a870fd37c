# Compares two runs' metrics.jsonl (used by the data-parallel script tests):
#   python3 metrics_match.py A.jsonl B.jsonl LOSS_RTOL GNORM_RTOL [FIRST_STEP]
# Training lines from FIRST_STEP on (default 1) must exist for the same steps in both, with
# identical "data" digests (the same windows in every step), loss within LOSS_RTOL and
# grad_norm within GNORM_RTOL (relative); validation lines likewise for val_loss (LOSS_RTOL).
# Prints the largest differences; exits 1 on a mismatch.
#
# Why two tolerances: float rounding that differs between the runs (another summation order)
# flips the sign of gradient components that are nearly zero, and AdamW turns each flip into a
# full-size step of that weight; the gradient norm shows this far more than the loss does.
import json
import sys


def lines(path, first):
    train, val = {}, {}
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if j["step"] < first:
                continue
            (val if "val_loss" in j else train)[j["step"]] = j
    return train, val


def main():
    a_path, b_path = sys.argv[1], sys.argv[2]
    rtol = {"loss": float(sys.argv[3]), "val_loss": float(sys.argv[3]), "grad_norm": float(sys.argv[4])}
    first = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    (a_train, a_val), (b_train, b_val) = lines(a_path, first), lines(b_path, first)
    ok = True
    if sorted(a_train) != sorted(b_train) or sorted(a_val) != sorted(b_val) or not a_train:
        print(f"FAIL: the runs logged different steps: {sorted(a_train)} / {sorted(b_train)}, "
              f"val {sorted(a_val)} / {sorted(b_val)}")
        return 1
    worst = {key: (0.0, first) for key in rtol}
    for kind, a_lines, b_lines, keys in (("train", a_train, b_train, ("loss", "grad_norm")),
                                         ("val", a_val, b_val, ("val_loss",))):
        for step in sorted(a_lines):
            a, b = a_lines[step], b_lines[step]
            if kind == "train" and a["data"] != b["data"]:
                print(f"FAIL: step {step} trained on other windows (data {a['data']} vs {b['data']})")
                ok = False
            for key in keys:
                diff = abs(a[key] - b[key]) / max(abs(a[key]), 1e-30)
                if diff > worst[key][0]:
                    worst[key] = (diff, step)
                if diff > rtol[key]:
                    print(f"FAIL: step {step} {key} {a[key]!r} vs {b[key]!r} "
                          f"(relative difference {diff:.2e} > {rtol[key]:g})")
                    ok = False
    summary = ", ".join(f"{key} {d:.1e} (step {s})" for key, (d, s) in sorted(worst.items()))
    print(f"{len(a_train)} steps, {len(a_val)} evaluations, same windows; largest relative differences: {summary}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
