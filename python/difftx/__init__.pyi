# Typed signatures of the difftx module (python/src/*.cpp binds them; docstrings there).
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence, overload

import numpy as np
import numpy.typing as npt

_Path = str | PathLike[str]
_Ids = Sequence[int] | npt.NDArray[np.integer[Any]]

class Error(Exception):
    """An error the difftx library raised; the message says what was wrong and what was expected."""

class EngineFull(Error): ...
class TrainingDiverged(Error): ...

class Tokenizer:
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def name(self) -> str: ...

class Stream(Iterator[str]):
    def __iter__(self) -> Stream: ...
    def __next__(self) -> str: ...
    @property
    def finish_reason(self) -> Literal["stop", "length", "cancelled", "error"] | None: ...

class Model:
    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def variant(self) -> Literal["baseline", "diff", "diff2"]: ...
    @property
    def num_parameters(self) -> int: ...
    @property
    def path(self) -> Path: ...
    @property
    def tokenizer(self) -> Tokenizer | None: ...
    @overload
    def logits(self, ids: _Ids) -> npt.NDArray[np.float32]: ...
    @overload
    def logits(self, ids: Sequence[_Ids]) -> list[npt.NDArray[np.float32]]: ...
    def taps(self, ids: _Ids) -> dict[str, npt.NDArray[np.float32]]: ...
    def generate(
        self, prompt: str, *, max_new_tokens: int | None = None, temperature: float | None = None,
        top_k: int | None = None, top_p: float | None = None, min_p: float | None = None,
        presence_penalty: float = 0.0, frequency_penalty: float = 0.0, repetition_penalty: float | None = None,
        seed: int = 1,
        stop: str | Sequence[str] | None = None, json_schema: dict[str, Any] | bool | str | None = None,
        grammar: str | None = None, regex: str | None = None, choice: Sequence[str] | None = None,
        logit_bias: Mapping[int, float] = {}, skip_special_tokens: bool = True,
        stop_token_ids: Sequence[int] = (), ignore_eos: bool = False, include_stop_str_in_output: bool = False,
        min_tokens: int = 0, bad_words: Sequence[str] = (),
    ) -> str: ...
    def stream(
        self, prompt: str, *, max_new_tokens: int | None = None, temperature: float | None = None,
        top_k: int | None = None, top_p: float | None = None, min_p: float | None = None,
        presence_penalty: float = 0.0, frequency_penalty: float = 0.0, repetition_penalty: float | None = None,
        seed: int = 1,
        stop: str | Sequence[str] | None = None, json_schema: dict[str, Any] | bool | str | None = None,
        grammar: str | None = None, regex: str | None = None, choice: Sequence[str] | None = None,
        logit_bias: Mapping[int, float] = {}, skip_special_tokens: bool = True,
        stop_token_ids: Sequence[int] = (), ignore_eos: bool = False, include_stop_str_in_output: bool = False,
        min_tokens: int = 0, bad_words: Sequence[str] = (),
    ) -> Stream: ...
    def generate_many(
        self, prompts: Sequence[str], *, max_new_tokens: int | None = None, temperature: float | None = None,
        top_k: int | None = None, top_p: float | None = None, min_p: float | None = None,
        presence_penalty: float = 0.0, frequency_penalty: float = 0.0, repetition_penalty: float | None = None,
        seed: int = 1,
        stop: str | Sequence[str] | None = None, json_schema: dict[str, Any] | bool | str | None = None,
        grammar: str | None = None, regex: str | None = None, choice: Sequence[str] | None = None,
        logit_bias: Mapping[int, float] = {}, skip_special_tokens: bool = True,
        stop_token_ids: Sequence[int] = (), ignore_eos: bool = False, include_stop_str_in_output: bool = False,
        min_tokens: int = 0, bad_words: Sequence[str] = (),
    ) -> list[str]: ...

def load(
    path: _Path, *, weights: Literal["as_stored", "f32"] = "as_stored",
    kv_dtype: Literal["bf16", "f32", "int8"] = "bf16", threads: int | None = None, device: str | None = None,
    draft: str | None = None, draft_tokens: int | None = None,
) -> Model: ...
def attention_map(
    model: Model, ids: _Ids, layer: int, head: int, query: int = -1, *, normalised: bool = True
) -> npt.NDArray[np.float64]: ...

def niah(
    model: Model, data: _Path, *, contexts: Sequence[int] = ..., needles: Sequence[int] = ...,
    queried: Sequence[int] = ..., depths: Sequence[float] = ..., samples: int = 20, seed: int = 1,
    value_digits: int = 3, split: str = "val",
) -> dict[str, Any]: ...
def mqar(
    model: Model, data: _Path, *, pairs: int = 16, queries: int = 8, samples: int = 200, seed: int = 1
) -> dict[str, Any]: ...
def attention(
    model: Model, data: _Path, *, context: int = 256, needles: int = 1, depths: Sequence[float] = ...,
    per_depth: int = 4, seed: int = 1, map_layer: int = -1, map_head: int = -1,
) -> dict[str, Any]: ...
def outliers(
    model: Model, data: _Path, *, tokens: int = 65536, seq_len: int = 256, micro_batch: int = 8
) -> dict[str, Any]: ...
def quant(
    model: Model, data: _Path, *, bits: Sequence[int] = (0, 16, 8, 6, 4), seq_len: int = 256,
    micro_batch: int = 8, max_batches: int = 0,
) -> list[dict[str, Any]]: ...
def eval(
    model: Model, data: _Path, *, seq_len: int = 256, micro_batch: int = 8, max_batches: int = 0
) -> dict[str, Any]: ...

def train(
    config: _Path | None, data: _Path, out: _Path, *, init: _Path | None = None, steps: int = 1000,
    seq_len: int = 256, micro_batch: int = 8, batch_tokens: int = 0, lr: float = 1e-3,
    min_lr_ratio: float = 0.1, warmup: int = 100, schedule: Literal["cosine", "linear", "constant"] = "cosine",
    weight_decay: float = 0.1, grad_clip: float = 1.0, beta1: float = 0.9, beta2: float = 0.95, seed: int = 1,
    mix: str | None = None, eval_every: int = 100, eval_batches: int = 16, checkpoint_every: int = 500,
    keep_checkpoints: int = 2, log_every: int = 1, resume: bool = False, quiet: bool = False,
    on_step: Callable[[dict[str, Any]], bool | None] | None = None,
) -> dict[str, Any]: ...
def prepare(
    corpus: _Path | Sequence[_Path], out: _Path, *, tokenizer: str | None = None, vocab_size: int = 0,
    val_fraction: float = 0.05, max_document_bytes: int = 0, shard_tokens: int = 100000000, quiet: bool = True,
) -> dict[str, Any]: ...
def convert(
    model: _Path, out: _Path, *, to: Literal["difftx", "hf", "gguf"] = "difftx", dtype: str = "f32",
    head_dtype: str | None = None,
) -> Path: ...
