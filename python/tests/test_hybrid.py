"""A Phi-4-mini-flash (SambaY hybrid) directory through the module's generation, against `difftx generate`."""
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
