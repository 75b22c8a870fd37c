"""docs/python_example.py runs on small models and writes its figure and table."""
import subprocess
import sys

from conftest import REPO


def test_the_example_runs(diff_dir, baseline_dir, data_dir, tmp_path):
    png = tmp_path / "attention.png"
    done = subprocess.run([sys.executable, str(REPO / "docs" / "python_example.py"), "--diff", str(diff_dir),
                           "--baseline", str(baseline_dir), "--data", str(data_dir), "--out", str(png),
                           "--context", "64"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("model "))
    assert [line.split()[0] for line in lines[header + 1:]] == ["diff", "baseline"]
