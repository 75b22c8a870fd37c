"""load, the model's properties, the tokenizer, logits (bit for bit `difftx logits`), errors."""
import subprocess

import numpy as np
import pytest

import difftx
from conftest import FIXTURES, REPO, run

# Model directories of every layout: difftx's own (the oracle's configurations) and Hugging Face
# Llama / DiffLlama in F32, BF16 and F16, sharded or not.
LOGITS_DIRS = sorted((FIXTURES / "oracle").iterdir()) + [
    FIXTURES / "hf" / name
    for name in ("llama_mha_f32", "diffllama_mha_f32", "diffllama_gqa4_bf16_llama3", "llama_gqa4_f16_llama3_sharded")
]


def ids_for(model, n=11):
    return [(7 * i + 3) % model.config["vocab_size"] for i in range(n)]


@pytest.mark.parametrize("path", LOGITS_DIRS, ids=lambda p: p.name)
def test_logits_equal_the_cli_bit_for_bit(binary, tmp_path, path):
    model = difftx.load(path)
    ids = ids_for(model)
    out = tmp_path / "logits.npy"
    run(binary, "logits", "--model", path, "--tokens", " ".join(map(str, ids)), "--out", out)
    expected = np.load(out)
    got = model.logits(ids)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("name", ["phi4flash_l4_window_over_t_f32", "phi4flash_l8_gqa_bf16_sharded"])
def test_a_hybrid_models_logits_equal_the_cli_and_the_oracle(binary, tmp_path, name):
    """Phi-4-mini-flash's hybrid stack runs its own forward, as `difftx logits` does."""
    path = FIXTURES / "phi4flash" / name
    model = difftx.load(path)
    ids = np.load(path / "tokens.npy")[0].tolist()
    out = tmp_path / "logits.npy"
    run(binary, "logits", "--model", path, "--tokens", " ".join(map(str, ids)), "--out", out)
    got = model.logits(ids)
    assert np.array_equal(got, np.load(out))
    assert np.abs(got - np.load(path / "logits.npy")[0]).max() <= 2e-3  # the float64 oracle's bound


def test_batches_and_arrays():
    model = difftx.load(FIXTURES / "oracle" / "diff")
    a, b = ids_for(model, 5), ids_for(model, 9)
    batch = model.logits([a, np.array(b, dtype=np.int32)])
    assert isinstance(batch, list) and len(batch) == 2
    assert np.array_equal(batch[0], model.logits(a)) and np.array_equal(batch[1], model.logits(np.array(b)))
    rows = model.logits(np.array([a, a]))
    assert np.array_equal(rows[1], model.logits(a))


def test_properties(diff_model):
    assert diff_model.variant == "diff"
    assert diff_model.config["attention"] == "diff" and diff_model.config["hidden_size"] == 64
    assert diff_model.num_parameters > 0
    assert "diff" in repr(diff_model)
    assert difftx.load(FIXTURES / "hf" / "llama_mha_f32").variant == "baseline"
    assert difftx.load(FIXTURES / "oracle" / "diff2").variant == "diff2"


def test_tokenizer_matches_the_cli(binary, diff_dir, diff_model):
    tok = diff_model.tokenizer
    assert tok.vocab_size == 512
    text = "The State of the Union, in 2024."
    ids = tok.encode(text)
    import subprocess
    cli = subprocess.run([binary, "tokenize", "--tokenizer", str(diff_dir)], input=text, capture_output=True,
                         text=True, check=True).stdout.split()
    assert ids == [int(x) for x in cli]
    assert tok.decode(ids) == text
    assert difftx.load(FIXTURES / "oracle" / "diff").tokenizer is None


def test_errors_are_difftx_errors(tmp_path):
    with pytest.raises(difftx.Error, match="not a model directory|does not exist|config.json"):
        difftx.load(tmp_path / "nope")
    model = difftx.load(FIXTURES / "oracle" / "diff")
    with pytest.raises(difftx.Error, match=r"id 61 at position 1 is outside the vocabulary \[0, 61\)"):
        model.logits([1, 61])
    with pytest.raises(difftx.Error, match="no token ids"):
        model.logits([])
    with pytest.raises(difftx.Error, match="exceed max_position_embeddings 64"):
        model.logits([1] * 65)
    with pytest.raises(difftx.Error, match="got dtype float64"):  # never truncated to [1, 2]
        model.logits([1.5, 2.9])
    with pytest.raises(difftx.Error, match="got dtype float64"):
        model.logits(np.array([[1.0, 2.0]]))
    with pytest.raises(difftx.Error, match="is not a precision"):
        difftx.load(FIXTURES / "oracle" / "diff", weights="f8")
    with pytest.raises(difftx.Error, match="expected f32, bf16 or int8"):
        difftx.load(FIXTURES / "oracle" / "diff", kv_dtype="fp8")
    with pytest.raises(difftx.Error, match="no tokenizer in the model directory"):
        model.generate("x")
    with pytest.raises(difftx.Error, match="vulkan"):  # no such device: an error, never the CPU
        difftx.load(FIXTURES / "oracle" / "diff", device="vulkan:99")
    assert difftx.load(FIXTURES / "oracle" / "diff", device="cpu").variant == "diff"
    assert issubclass(difftx.TrainingDiverged, difftx.Error) and issubclass(difftx.EngineFull, difftx.Error)
    # A message holding bytes that are no UTF-8 (here a path's) keeps them, escaped; it was dropped.
    with pytest.raises(difftx.Error, match=r"/nowhere\\xff: the model directory does not exist"):
        difftx.load(b"/nowhere\xff".decode("utf-8", "surrogateescape"))


def test_ctrl_c_stops_a_batch_between_rows():
    import os, signal, threading, time
    model = difftx.load(FIXTURES / "oracle" / "diff", threads=1)
    rows = np.ones((20000, 60), dtype=np.int64)  # some seconds of rows
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        model.logits(rows)
    assert time.monotonic() - start < 3, "the interrupt waited for the whole batch"


def test_threads_give_the_same_logits():
    path = FIXTURES / "oracle" / "baseline"
    one, two = difftx.load(path, threads=1), difftx.load(path, threads=2)
    ids = ids_for(one, 40)
    assert np.array_equal(one.logits(ids), two.logits(ids))
    with pytest.raises(difftx.Error, match="threads"):
        difftx.load(path, threads=0)
    with pytest.raises(difftx.Error, match=r"threads: 2147483647 must be in \[1, 1024\]"):  # libgomp would exit
        difftx.load(path, threads=2**31 - 1)


def test_a_device_gives_the_cpus_logits_and_names_itself_when_missing(binary):
    path = FIXTURES / "oracle" / "diff2"
    with pytest.raises(difftx.Error, match="unknown device 'tpu'"):
        difftx.load(path, device="tpu")
    with pytest.raises(difftx.Error, match="unknown device ''"):  # not taken as the CPU
        difftx.load(path, device="")
    if "vulkan:0" not in subprocess.run([binary, "--version"], capture_output=True, text=True).stdout:
        pytest.skip("no Vulkan device here")
    cpu, gpu = difftx.load(path), difftx.load(path, device="vulkan:0")
    ids = ids_for(cpu, 40)
    assert np.abs(gpu.logits(ids) - cpu.logits(ids)).max() < 1e-3
    # What reads activations on the host refuses a model on the device at once, saying so.
    for analysis in (lambda: gpu.taps(ids), lambda: difftx.attention_map(gpu, ids, 0, 0),
                     lambda: difftx.quant(gpu, FIXTURES / "no_such_data")):
        with pytest.raises(difftx.Error, match='runs on the CPU; this model is on vulkan:0 .*device "cpu"'):
            analysis()


def test_docstrings_and_signatures():
    assert "bit for bit" in difftx.Model.logits.__doc__
    assert "weights" in difftx.load.__doc__ and "kv_dtype" in difftx.load.__doc__
    assert "on_step" in difftx.train.__doc__


def test_the_stub_names_what_the_module_has():
    import ast
    stub = ast.parse((REPO / "python" / "difftx" / "__init__.pyi").read_text())
    named = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert named == set(difftx.__all__)
    for cls in (node for node in stub.body if isinstance(node, ast.ClassDef)):
        for member in cls.body:
            if isinstance(member, ast.FunctionDef):
                assert hasattr(getattr(difftx, cls.name), member.name), f"{cls.name}.{member.name}"


def test_ids_that_are_not_a_sequence_are_errors():
    model = difftx.load(FIXTURES / "oracle" / "diff")
    with pytest.raises(difftx.Error, match="expected a sequence of token ids"):
        model.logits("hello")
    with pytest.raises(difftx.Error, match="expected a sequence of token ids"):
        model.taps(np.zeros((2, 2, 2), dtype=np.int32))
