"""train from Python: the CLI's losses, the per-step callback, stopping at a checkpoint, resume;
prepare and convert."""
import json

import numpy as np
import pytest

import difftx
from conftest import FIXTURES, REPO, run

OPTIONS = dict(steps=12, seq_len=64, micro_batch=4, lr=1e-2, warmup=3, eval_every=6, eval_batches=2,
               checkpoint_every=0, seed=3, quiet=True)


def losses(run_dir):
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [(m["step"], m["loss"]) for m in lines if "loss" in m], [(m["step"], m["val_loss"]) for m in lines
                                                                   if "val_loss" in m]


def test_train_gives_the_cli_losses(diff_run, data_dir, tmp_path):
    seen = []
    summary = difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run",
                           on_step=lambda s: seen.append(s), **OPTIONS)
    assert losses(tmp_path / "run") == losses(diff_run)
    train, val = losses(diff_run)
    assert [(s["step"], s["loss"]) for s in seen] == train
    assert [(s["step"], s["val_loss"]) for s in seen if s["val_loss"] is not None] == val
    assert summary["steps_done"] == 12 and not summary["stopped"] and summary["val_loss"] == val[-1][1]
    assert (tmp_path / "run" / "checkpoints" / "step_00000012" / "model.safetensors").exists()


def test_returning_false_stops_at_a_checkpoint_and_resume_continues(diff_run, data_dir, tmp_path):
    out = tmp_path / "run"
    summary = difftx.train(FIXTURES / "train" / "diff.json", data_dir, out, on_step=lambda s: s["step"] < 5, **OPTIONS)
    assert summary["stopped"] and summary["steps_done"] == 5
    assert difftx.load(out / "checkpoints" / "step_00000005").variant == "diff"
    difftx.train(FIXTURES / "train" / "diff.json", data_dir, out, resume=True, **OPTIONS)
    assert losses(out) == losses(diff_run)  # a bitwise resume


def test_an_exception_in_the_callback_stops_at_a_checkpoint_and_is_raised(data_dir, tmp_path):
    def interrupt(s):
        if s["step"] == 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run", on_step=interrupt, **OPTIONS)
    assert difftx.load(tmp_path / "run" / "checkpoints" / "step_00000003").num_parameters > 0
    with pytest.raises(ValueError, match="boom"):
        difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run2",
                     on_step=lambda s: (_ for _ in ()).throw(ValueError("boom")), **OPTIONS)


def test_train_errors(data_dir, tmp_path):
    with pytest.raises(difftx.Error, match="exceeds max_position_embeddings"):
        difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run", **{**OPTIONS, "seq_len": 512})
    with pytest.raises(difftx.Error, match="give a config"):
        difftx.train(None, data_dir, tmp_path / "run")
    with pytest.raises(difftx.Error, match="(?<!-)steps must be positive"):  # the keyword, not --steps
        difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run", **{**OPTIONS, "steps": 0})
    with pytest.raises(difftx.Error, match="(?<!-)seq_len and micro_batch must be positive"):
        difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run", **{**OPTIONS, "micro_batch": 0})
    with pytest.raises(difftx.Error, match="(?<!-)mix: unknown task 'needle'"):  # the keyword, not --mix
        difftx.train(FIXTURES / "train" / "diff.json", data_dir, tmp_path / "run", **{**OPTIONS, "mix": "needle=0.1"})


def test_progress_lines_go_to_python(data_dir, tmp_path, capsys):
    difftx.train(FIXTURES / "train" / "baseline.json", data_dir, tmp_path / "run", **{**OPTIONS, "steps": 2,
                                                                                     "quiet": False})
    assert "step     2/2 | loss" in capsys.readouterr().out


def test_prepare_and_convert(binary, data_dir, diff_dir, tmp_path):
    meta = difftx.prepare([REPO / "README.md", REPO / "docs"], tmp_path / "data", tokenizer=str(data_dir))
    assert meta["tokenizer"]["vocab_size"] == 512 and meta["splits"]["train"]["tokens"] > 0
    with pytest.raises(difftx.Error, match="either tokenizer"):
        difftx.prepare(REPO / "README.md", tmp_path / "x")
    with pytest.raises(difftx.Error, match="(?<!-)val_fraction 1 is outside"):  # the keyword, not --val-fraction
        difftx.prepare(REPO / "README.md", tmp_path / "x", tokenizer=str(data_dir), val_fraction=1.0)
    with pytest.raises(difftx.Error, match="cut long ones with max_document_bytes, or val_fraction 0$"):
        difftx.prepare(REPO / "README.md", tmp_path / "x", tokenizer=str(data_dir), val_fraction=0.5)
    out = difftx.convert(diff_dir, tmp_path / "bf16", dtype="bf16")
    cli = tmp_path / "bf16_cli"
    run(binary, "convert", "--model", diff_dir, "--out", cli, "--dtype", "bf16")
    assert (out / "model.safetensors").read_bytes() == (cli / "model.safetensors").read_bytes()
    ids = list(range(1, 30))
    assert np.array_equal(difftx.load(out).logits(ids), difftx.load(cli).logits(ids))
    with pytest.raises(difftx.Error, match="exists and is not an empty directory"):
        difftx.convert(diff_dir, out)
    with pytest.raises(difftx.Error, match="(?<!-)dtype: 'q3' is not a storage type"):  # the keyword, not --dtype
        difftx.convert(diff_dir, tmp_path / "q", dtype="q3")
    with pytest.raises(difftx.Error, match="(?<!-)to: 'onnx' is not a format"):
        difftx.convert(diff_dir, tmp_path / "q", to="onnx")
