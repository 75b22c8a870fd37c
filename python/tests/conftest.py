"""Shared fixtures: the difftx binary the module is compared with, and small models with a
tokenizer trained by the CLI on a corpus made of the repository's own documentation."""
import os
import pathlib
import subprocess

import pytest

import difftx

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TRAIN_ARGS = ["--steps", "12", "--seq-len", "64", "--micro-batch", "4", "--lr", "1e-2", "--warmup", "3",
              "--eval-every", "6", "--eval-batches", "2", "--checkpoint-every", "0", "--seed", "3"]


@pytest.fixture(scope="session")
def binary():
    path = os.environ.get("DIFFTX_BINARY", str(REPO / "build" / "release" / "difftx"))
    if not os.path.exists(path):
        pytest.skip(f"no difftx binary at {path} (set DIFFTX_BINARY)")
    return path


def run(binary, *args):
    """Runs the CLI; its stdout."""
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory, binary):
    """A 512-token vocabulary and its shards, from README.md and docs/*.md."""
    out = tmp_path_factory.mktemp("data") / "docs"
    corpus = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    run(binary, "prepare", "--corpus", *corpus, "--vocab-size", 512, "--val-fraction", 0.2, "--out", out, "--quiet")
    return out


def train_cli(binary, data_dir, out, variant):
    run(binary, "train", "--config", FIXTURES / "train" / f"{variant}.json", "--data", data_dir, "--out", out,
        *TRAIN_ARGS, "--quiet")
    return out


@pytest.fixture(scope="session")
def diff_run(tmp_path_factory, binary, data_dir):
    """A DIFF V1 run of the CLI: RUN_DIR with metrics.jsonl and checkpoints/step_00000012."""
    return train_cli(binary, data_dir, tmp_path_factory.mktemp("runs") / "diff", "diff")


@pytest.fixture(scope="session")
def baseline_run(tmp_path_factory, binary, data_dir):
    return train_cli(binary, data_dir, tmp_path_factory.mktemp("runs") / "baseline", "baseline")


@pytest.fixture(scope="session")
def diff_dir(diff_run):
    return diff_run / "checkpoints" / "step_00000012"


@pytest.fixture(scope="session")
def baseline_dir(baseline_run):
    return baseline_run / "checkpoints" / "step_00000012"


@pytest.fixture(scope="session")
def diff_model(diff_dir):
    return difftx.load(diff_dir)
