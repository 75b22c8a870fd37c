"""Interrupts (Ctrl-C during a long call), reference counts and memory."""
import gc
import json
import os
import random
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import difftx
from conftest import FIXTURES, run


def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def exits_cleanly_each_time(script, timeout, times=3):
    for _ in range(times):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, (done.returncode, done.stderr)


def test_sigint_during_training_raises_keyboardinterrupt_at_a_checkpoint(data_dir, tmp_path):
    # A run far longer than the test; SIGINT arrives a second in, from outside the process.
    script = textwrap.dedent(f"""
        import difftx, sys
        try:
            difftx.train({str(FIXTURES / "train" / "diff.json")!r}, {str(data_dir)!r}, {str(tmp_path / "run")!r},
                         steps=1000000, seq_len=64, micro_batch=4, eval_every=0, eval_batches=0,
                         checkpoint_every=0, quiet=True, on_step=lambda s: s["step"] != 2 or print("running", flush=True))
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "running"
    proc.send_signal(2)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 3 and out.strip() == "interrupted"
    checkpoints = sorted((tmp_path / "run" / "checkpoints").glob("step_*"))
    assert len(checkpoints) == 1 and difftx.load(checkpoints[0]).variant == "diff"


def test_sigint_during_generation(diff_dir):
    script = textwrap.dedent(f"""
        import difftx, os, signal, sys, threading
        model = difftx.load({str(diff_dir)!r})
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            while True:  # many short generations: the signal lands inside one
                model.generate_many(["The Congress"] * 8, max_new_tokens=200)
        except KeyboardInterrupt:
            print(model.generate("The Congress", max_new_tokens=5, temperature=0) != "", flush=True)
            sys.exit(3)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3 and done.stdout.strip() == "True", done.stderr


def interrupted_promptly(call, setup=""):
    """Runs `call` in a fresh interpreter after `setup`; SIGINT arrives 0.3 s into it, and the call
    must raise KeyboardInterrupt well before it would have ended."""
    script = f"import difftx, os, signal, sys, threading, time\n{setup}\n" + textwrap.dedent(f"""
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            {call}
        except KeyboardInterrupt:
            print(time.monotonic() - start, flush=True)
            sys.exit(3)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert float(done.stdout) < 2, "the interrupt waited for the call to end"


def test_sigint_stops_mqar_and_attention_between_episodes_and_prompts(diff_dir, data_dir):
    # Uninterrupted, mqar runs for minutes and attention for some 20 s.
    load = f"model = difftx.load({str(diff_dir)!r})"
    interrupted_promptly(f"difftx.mqar(model, {str(data_dir)!r}, samples=10**6)", load)
    interrupted_promptly(f"difftx.attention(model, {str(data_dir)!r}, context=240, per_depth=2000)", load)


def test_sigint_stops_prepare_while_it_trains_the_vocabulary(tmp_path):
    # A 20000-token vocabulary on 1 MiB of random words: some seconds uninterrupted.
    alphabet = b"abcdefghij klmnopqrst uvwxyz \n"
    words = random.Random(1).randbytes(1 << 20).translate(bytes(alphabet[i % len(alphabet)] for i in range(256)))
    (tmp_path / "words.txt").write_bytes(words)
    out = tmp_path / "data"
    interrupted_promptly(f"difftx.prepare({str(tmp_path / 'words.txt')!r}, {str(out)!r}, vocab_size=20000, "
                         "max_document_bytes=32768)")
    assert not (out / "metadata.json").exists()  # the directory reads as unfinished


def test_sigint_stops_convert_between_tensors(binary, tmp_path):
    # 27.5M parameters: about 2 s to convert to q4_k uninterrupted.
    config = json.loads((FIXTURES / "train" / "diff.json").read_text())
    config.update(hidden_size=512, num_hidden_layers=8, num_attention_heads=4, num_key_value_heads=4, head_dim=64,
                  intermediate_size=1536)
    (tmp_path / "config.json").write_text(json.dumps(config))
    run(binary, "init", "--config", tmp_path / "config.json", "--out", tmp_path / "model", "--dtype", "bf16")
    out = tmp_path / "q4_k"
    interrupted_promptly(f"difftx.convert({str(tmp_path / 'model')!r}, {str(out)!r}, dtype='q4_k')")
    assert not out.exists()  # no weights file, and not the directory convert made


def test_the_interpreter_exits_while_daemon_threads_run_difftx(diff_dir):
    # CPython ends a daemon thread that takes the GIL back during its exit; from inside difftx's
    # C++ work that was std::terminate (exit code 134). Such threads now wait out the exit.
    script = textwrap.dedent(f"""
        import difftx, sys, threading, time
        import numpy as np
        model = difftx.load({str(diff_dir)!r}, threads=1)
        def logits():
            while True:
                model.logits(np.ones(60, dtype=np.int64))
        def stream():
            while True:
                for _ in model.stream("The Congress", max_new_tokens=60, ignore_eos=True):
                    pass
        for work in (logits, stream):
            threading.Thread(target=work, daemon=True).start()
        time.sleep(0.5)
    """)
    exits_cleanly_each_time(script, timeout=120)


def test_the_interpreter_exits_while_daemon_threads_run_difftx_on_vulkan(binary):
    # The exit closes the Vulkan device (before the driver's own exit handlers) while the threads
    # run ops on it: an op after the close is an error in its thread, never a crash.
    if "vulkan:0" not in subprocess.run([binary, "--version"], capture_output=True, text=True).stdout:
        pytest.skip("no Vulkan device here")
    script = textwrap.dedent(f"""
        import difftx, threading, time
        import numpy as np
        model = difftx.load({str(FIXTURES / "oracle" / "diff")!r}, device="vulkan:0", threads=1)
        model.logits(np.ones(60, dtype=np.int64))  # the shaders compiled before the threads start
        def logits():
            while True:
                model.logits(np.ones(60, dtype=np.int64))
        for _ in range(2):
            threading.Thread(target=logits, daemon=True).start()
        time.sleep(0.3)
    """)
    exits_cleanly_each_time(script, timeout=300)


def test_a_model_is_freed_with_its_last_reference(diff_dir):
    model = difftx.load(diff_dir)
    ref = weakref.ref(model)
    stream = model.stream("The Congress", max_new_tokens=5)
    del model
    gc.collect()
    assert ref() is None
    assert "".join(stream)  # the stream keeps the weights it reads alive
    before = rss_kib()
    for _ in range(30):
        m = difftx.load(FIXTURES / "hf" / "diffllama_mha_f32")
        m.logits([1, 2, 3])
        del m
    assert rss_kib() - before < 20 * 1024


def test_no_memory_growth_over_many_calls():
    model = difftx.load(FIXTURES / "oracle" / "diff")
    ids = np.arange(40) % 61
    for _ in range(100):  # warm up allocators
        model.logits(ids)
    before = rss_kib()
    for _ in range(1000):
        model.logits(ids)
        model.taps(ids)
    assert rss_kib() - before < 4 * 1024
