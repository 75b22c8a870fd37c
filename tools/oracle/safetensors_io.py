"""The safetensors file format, written by hand (Debian's torch 1.13 has no safetensors module).

Layout: 8-byte little-endian unsigned header length N, then N bytes of UTF-8 JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}
padded with spaces to a multiple of 8, then the raw little-endian tensor bytes. Offsets are
relative to the first byte after the header; tensors are stored back to back in the order given.
"""

import json
import struct

import numpy as np
import torch

DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "I32": np.dtype("<i4"),
          "I64": np.dtype("<i8")}
TORCH_TO_DTYPE = {torch.float32: "F32", torch.float64: "F64", torch.int32: "I32",
                  torch.int64: "I64"}


def write_safetensors(path, tensors, metadata=None):
    """Write {name: (dtype tag, tensor)} to path; metadata values must be strings."""
    header, chunks, offset = {}, [], 0
    if metadata:
        if not all(isinstance(v, str) for v in metadata.values()):
            raise ValueError("safetensors metadata values must be strings")
        header["__metadata__"] = dict(metadata)
    for name, (tag, tensor) in tensors.items():
        array = tensor.detach().cpu().numpy().astype(DTYPES[tag], copy=False)
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": tag, "shape": list(array.shape),
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


def read_safetensors(path):
    """Read a file written in this format; returns ({name: tensor}, metadata)."""
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
        array = np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"])
        tensors[name] = torch.from_numpy(array.copy())
    return tensors, metadata
