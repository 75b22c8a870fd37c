"""Broken sharded checkpoints, tests/fixtures/hf/bad_*/, for the loader's error tests.

Each starts from one valid two-shard checkpoint (the caller's config and weights) and breaks
exactly one thing; the message of the loader's error must name the file or tensor in
BAD_CASES (tests/model/hf_import_test.cpp holds the same table).
"""

import json
import os

from hf_checkpoint import fresh_dir, shard_names, write_json, write_weights
from safetensors_io import write_safetensors

INDEX = "model.safetensors.index.json"
FIRST, LAST = shard_names(2)
MOVED = "model.norm.weight"                             # the last tensor: in the last shard
DROPPED = "model.layers.0.self_attn.k_proj.weight"     # a tensor the config requires
EXTRA = "model.layers.0.mlp.extra_proj.weight"          # no such tensor in a Llama
OUTSIDE = "../x.safetensors"

# case -> what the loader's error message must contain
BAD_CASES = {
    "bad_missing_shard": LAST,
    "bad_name_in_two_shards": MOVED,
    "bad_shard_outside_dir": OUTSIDE,
    "bad_tensor_missing_from_shard": MOVED,
    "bad_extra_tensor_in_shard": EXTRA,
    "bad_missing_tensor": DROPPED,
}


def _rewrite_shard(case_dir, file_name, tensors):
    write_safetensors(os.path.join(case_dir, file_name), tensors, {"format": "pt"})


def _index_text(total_size, pairs):
    """The index JSON as save_pretrained formats it, but from (name, file) pairs, so that a
    name can be listed twice (a JSON object with a repeated key)."""
    lines = [f'    {json.dumps(n)}: {json.dumps(f)}' for n, f in sorted(pairs)]
    return ('{\n  "metadata": {\n    "total_size": ' + str(total_size) + '\n  },\n'
            '  "weight_map": {\n' + ",\n".join(lines) + "\n  }\n}\n")


def _break(name, case_dir, weight_map, tensors, total_size):
    """Applies case `name`'s single fault to a valid two-shard checkpoint in case_dir."""
    def in_shard(file_name):
        return {n: tensors[n] for n, f in weight_map.items() if f == file_name}

    if name == "bad_missing_shard":
        os.remove(os.path.join(case_dir, LAST))
    elif name == "bad_name_in_two_shards":  # stored in both shards, listed under both
        _rewrite_shard(case_dir, FIRST, {**in_shard(FIRST), MOVED: tensors[MOVED]})
        pairs = list(weight_map.items()) + [(MOVED, FIRST)]
        with open(os.path.join(case_dir, INDEX), "w") as f:
            f.write(_index_text(total_size, pairs))
    elif name == "bad_shard_outside_dir":  # the index sends a tensor out of the directory
        _rewrite_shard(case_dir, LAST, {n: t for n, t in in_shard(LAST).items() if n != MOVED})
        _write_index(case_dir, {**weight_map, MOVED: OUTSIDE}, total_size)
    elif name == "bad_tensor_missing_from_shard":
        _rewrite_shard(case_dir, LAST, {n: t for n, t in in_shard(LAST).items() if n != MOVED})
    elif name == "bad_extra_tensor_in_shard":
        extra = ("BF16", tensors["model.layers.0.mlp.down_proj.weight"][1])
        _rewrite_shard(case_dir, FIRST, {**in_shard(FIRST), EXTRA: extra})
    elif name == "bad_missing_tensor":
        owner = weight_map[DROPPED]
        _rewrite_shard(case_dir, owner, {n: t for n, t in in_shard(owner).items() if n != DROPPED})
        _write_index(case_dir, {n: f for n, f in weight_map.items() if n != DROPPED}, total_size)
    else:
        raise ValueError(name)


def _write_index(case_dir, weight_map, total_size):
    write_json(os.path.join(case_dir, INDEX),
               {"metadata": {"total_size": total_size}, "weight_map": weight_map})


def write_all(out_dir, config, stored, log):
    """config: a two-shard-able Llama config.json dict; stored: its float64 weights (BF16 values)."""
    tensors = {n: ("BF16", t) for n, t in stored.items()}
    total_size = sum(2 * t.numel() for t in stored.values())
    for name in BAD_CASES:
        case_dir = fresh_dir(out_dir, name)
        write_json(os.path.join(case_dir, "config.json"), config)
        weight_map = write_weights(case_dir, stored, "BF16", 2)
        assert weight_map[MOVED] == LAST and weight_map[DROPPED] == FIRST, weight_map
        _break(name, case_dir, weight_map, tensors, total_size)
    log(f"bad indexes: {', '.join(BAD_CASES)}")
