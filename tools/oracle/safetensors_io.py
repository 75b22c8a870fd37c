"""The safetensors file format, written by hand (Debian's torch 1.13 has no safetensors module).

Layout: 8-byte little-endian unsigned header length N, then N bytes of UTF-8 JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}
padded with spaces to a multiple of 8, then the raw little-endian tensor bytes. Offsets are
relative to the first byte after the header; tensors are stored back to back in the order given.
F32/F64/I32/I64 go through numpy; F16 is IEEE binary16 (numpy float16); BF16 is the top 16
bits of a float32 (1 sign, 8 exponent, 7 mantissa bits), rounded to nearest, ties to even.
Tensors may be torch tensors or numpy arrays; torch is imported only by the functions that
return torch tensors, so the numpy-only Motif oracle (motif_model.py) runs without it.
"""

import json
import struct

import numpy as np

DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "I32": np.dtype("<i4"),
          "I64": np.dtype("<i8"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}


def float32_to_bf16_bits(values):
    """float32 array -> uint16 BF16 bit patterns, round to nearest even (finite inputs)."""
    bits = np.ascontiguousarray(values, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def bf16_bits_to_float32(bits):
    return (bits.astype("<u4") << 16).view("<f4")


def _as_array(tensor):
    return tensor if isinstance(tensor, np.ndarray) else tensor.detach().cpu().numpy()


def round_array_to_storage(tag, values):
    """The float64 values an array has once stored as F32, F16 or BF16 (what a reader gets)."""
    array = np.asarray(values, dtype=np.float64)
    if tag == "F32":
        stored = array.astype("<f4")
    elif tag == "F16":
        stored = array.astype("<f2")
    elif tag == "BF16":
        stored = bf16_bits_to_float32(float32_to_bf16_bits(array.astype("<f4")))
    else:
        raise ValueError(f"round_to_storage: {tag} is not a float storage type")
    return stored.astype(np.float64)


def round_to_storage(tag, tensor):
    """round_array_to_storage for a torch tensor: a float64 torch tensor."""
    import torch
    return torch.from_numpy(round_array_to_storage(tag, _as_array(tensor)))


def _encode(tag, tensor):
    array = _as_array(tensor)
    if tag == "BF16":
        return float32_to_bf16_bits(array.astype("<f4")), list(array.shape)
    return array.astype(DTYPES[tag], copy=False), list(array.shape)


def _decode(tag, data, shape):
    array = np.frombuffer(data, dtype=DTYPES[tag]).reshape(shape)
    if tag == "BF16":
        array = bf16_bits_to_float32(array)
    elif tag == "F16":
        array = array.astype("<f4")
    return array.copy()


def write_safetensors(path, tensors, metadata=None):
    """Write {name: (dtype tag, tensor)} to path; metadata values must be strings."""
    header, chunks, offset = {}, [], 0
    if metadata:
        if not all(isinstance(v, str) for v in metadata.values()):
            raise ValueError("safetensors metadata values must be strings")
        header["__metadata__"] = dict(metadata)
    for name, (tag, tensor) in tensors.items():
        array, shape = _encode(tag, tensor)
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": tag, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in chunks:
            f.write(data)


def read_safetensors_arrays(path):
    """Read a file written in this format; returns ({name: numpy array}, metadata). F16 and
    BF16 tensors come back as float32 (exactly)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: shorter than the 8-byte header length")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if 8 + header_len > len(blob):
        raise ValueError(f"{path}: header length {header_len} runs past the end of the file")
    header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    data = blob[8 + header_len:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        dtype = DTYPES[entry["dtype"]]
        count = int(np.prod(entry["shape"], dtype=np.int64))
        if not 0 <= begin <= end <= len(data) or end - begin != count * dtype.itemsize:
            raise ValueError(f"{path}: tensor {name} has bad data_offsets {entry['data_offsets']}")
        tensors[name] = _decode(entry["dtype"], data[begin:end], entry["shape"])
    return tensors, metadata


def read_safetensors(path):
    """read_safetensors_arrays with torch tensors."""
    import torch
    arrays, metadata = read_safetensors_arrays(path)
    return {name: torch.from_numpy(array) for name, array in arrays.items()}, metadata
