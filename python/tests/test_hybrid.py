"""A Phi-4-mini-flash (SambaY hybrid) directory through the module's generation, against `difftx generate`, and
through convert."""
import subprocess
import sys

import pytest

import difftx
from conftest import REPO, run

PROMPT = "The Congress"


@pytest.fixture(scope="module")
def hybrid_dir(tmp_path_factory):
    pytest.importorskip("numpy")
    out = tmp_path_factory.mktemp("hybrid") / "phi4flash"
    subprocess.run([sys.executable, str(REPO / "tools" / "oracle" / "write_phi4flash_dir.py"), str(out)], check=True)
    return out


def test_generate_equals_the_cli(binary, hybrid_dir):
    model = difftx.load(hybrid_dir)
    out = run(binary, "generate", "--model", hybrid_dir, "--prompt", PROMPT, "--max-new-tokens", 16, "--temperature", 0)
    assert model.generate(PROMPT, max_new_tokens=16, temperature=0) == out[len(PROMPT):-1]


def test_generate_many_is_batch_invariant(hybrid_dir):
    model = difftx.load(hybrid_dir)
    prompts = [PROMPT, "The people", "In the year of", PROMPT]
    many = model.generate_many(prompts, max_new_tokens=12, temperature=0.9, seed=5)
    assert many == [model.generate(p, max_new_tokens=12, temperature=0.9, seed=5) for p in prompts]


def test_convert_round_trip(binary, hybrid_dir, tmp_path):
    """The hybrid to difftx's format and back: the module loads every output, the f32 ones with the original's
    logits bit for bit, a q8_0 one generating what the CLI does; GGUF is refused by name."""
    np = pytest.importorskip("numpy")
    ids = list(range(1, 30))
    want = difftx.load(hybrid_dir).logits(ids)
    own = difftx.convert(hybrid_dir, tmp_path / "f32")
    back = difftx.convert(own, tmp_path / "hf", to="hf")
    assert np.array_equal(difftx.load(own).logits(ids), want)
    assert np.array_equal(difftx.load(back).logits(ids), want)
    q8 = difftx.convert(hybrid_dir, tmp_path / "q8", dtype="q8_0")
    out = run(binary, "generate", "--model", q8, "--prompt", PROMPT, "--max-new-tokens", 12, "--temperature", 0)
    assert difftx.load(q8).generate(PROMPT, max_new_tokens=12, temperature=0) == out[len(PROMPT):-1]
    with pytest.raises(difftx.Error, match="phi4flash"):
        difftx.convert(hybrid_dir, tmp_path / "gguf", to="gguf")
