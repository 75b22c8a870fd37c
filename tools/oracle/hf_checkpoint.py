"""Writing Hugging Face checkpoint directories: config.json, model.safetensors or shards with
model.safetensors.index.json, laid out as transformers' save_pretrained does (tensors: torch or
numpy)."""

import json
import math
import os
import shutil

from safetensors_io import write_safetensors


def shard_names(count):
    return [f"model-{k:05d}-of-{count:05d}.safetensors" for k in range(1, count + 1)]


def split_into_shards(names, sizes, count):
    """Consecutive runs of tensors of about equal bytes, as save_pretrained's size cap makes."""
    total, shards, current, filled = sum(sizes), [[] for _ in range(count)], 0, 0
    for name, size in zip(names, sizes):
        if filled >= (current + 1) * total / count and current + 1 < count:
            current += 1
        shards[current].append(name)
        filled += size
    assert all(shards), "every shard holds a tensor"
    return shards


def fresh_dir(out_dir, name):
    """out_dir/name, emptied (only directories this generator owns are removed)."""
    path = os.path.join(out_dir, name)
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def write_json(path, value):
    with open(path, "w") as f:
        f.write(json.dumps(value, indent=2, sort_keys=True) + "\n")


def write_weights(case_dir, stored, tag, shard_count, kept=()):
    """model.safetensors, or shard_count shards plus model.safetensors.index.json, every tensor
    stored as `tag` but those named in `kept`, which stay F32; returns the index's weight_map
    ({} for one file)."""
    tensors = {name: ("F32" if name in kept else tag, t) for name, t in stored.items()}
    metadata = {"format": "pt"}
    if shard_count == 1:
        write_safetensors(os.path.join(case_dir, "model.safetensors"), tensors, metadata)
        return {}
    sizes = [math.prod(t.shape) * (4 if tensors[n][0] == "F32" else 2) for n, t in stored.items()]  # torch or numpy
    groups = split_into_shards(list(stored), sizes, shard_count)
    weight_map = {}
    for file_name, group in zip(shard_names(shard_count), groups):
        write_safetensors(os.path.join(case_dir, file_name), {n: tensors[n] for n in group}, metadata)
        weight_map.update({n: file_name for n in group})
    write_json(os.path.join(case_dir, "model.safetensors.index.json"),
               {"metadata": {"total_size": sum(sizes)}, "weight_map": weight_map})
    return weight_map
