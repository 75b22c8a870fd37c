#!/usr/bin/env python3
"""How far next-token distributions are from reference ones, without NumPy.

    python3 bench/logit_error.py [--last] REF.npy OTHER [REF2.npy OTHER2 ...]

REF is `difftx logits` output (float32 [T, V]). OTHER is another such file (every row compared,
or with --last the last one) or the JSON of `node bench/llama_cpp/peer.mjs probs` (llama.cpp's
probabilities after the same tokens: compared with REF's last row). Over all compared rows: the mean and the largest
KL(ref || other) in nats, the largest |log p_other - log p_ref| over the tokens the reference
gives at least 1e-3, and how many rows agree on the most likely token.
"""
import ast
import json
import math
import struct
import sys


def read_npy(path):
    raw = open(path, "rb").read()
    assert raw[:6] == b"\x93NUMPY", path
    size, start = (struct.unpack("<H", raw[8:10])[0], 10) if raw[6] == 1 else (struct.unpack("<I", raw[8:12])[0], 12)
    header = ast.literal_eval(raw[start:start + size].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], (path, header)
    rows, cols = header["shape"]
    values = struct.unpack("<%df" % (rows * cols), raw[start + size:start + size + 4 * rows * cols])
    return [values[i * cols:(i + 1) * cols] for i in range(rows)]


def log_softmax(row):
    top = max(row)
    z = top + math.log(sum(math.exp(v - top) for v in row))
    return [v - z for v in row]


def log_probs(path, ref_rows, last):
    """OTHER's log-probabilities, one list per compared row, and those rows of the reference."""
    if not path.endswith(".json"):
        rows = [log_softmax(row) for row in read_npy(path)]
        return (rows[-1:], ref_rows[-1:]) if last else (rows, ref_rows)
    out = [-math.inf] * len(ref_rows[-1])
    for token, p in json.load(open(path))["probabilities"]:
        out[token] = math.log(p) if p > 0 else -math.inf
    return [out], ref_rows[-1:]


def main(paths):
    last = paths[:1] == ["--last"]
    paths = paths[1:] if last else paths
    if len(paths) < 2 or len(paths) % 2:
        sys.exit(__doc__)
    kls, worst, agree = [], 0.0, 0
    for ref_path, other_path in zip(paths[::2], paths[1::2]):
        other, ref = log_probs(other_path, [log_softmax(row) for row in read_npy(ref_path)], last)
        assert len(ref) == len(other), (ref_path, other_path)
        for r, o in zip(ref, other):
            kls.append(sum(math.exp(a) * (a - b) for a, b in zip(r, o)))
            worst = max(worst, max(abs(a - b) for a, b in zip(r, o) if a >= math.log(1e-3)))
            agree += max(range(len(r)), key=r.__getitem__) == max(range(len(o)), key=o.__getitem__)
    print("rows %d: mean KL %.3g nats, max KL %.3g, max |dlogp| (p >= 1e-3) %.3g, argmax agrees %d/%d"
          % (len(kls), sum(kls) / len(kls), max(kls), worst, agree, len(kls)))


if __name__ == "__main__":
    main(sys.argv[1:])
