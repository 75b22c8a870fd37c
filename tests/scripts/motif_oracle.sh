# The Motif oracle (tools/oracle/check_motif_model.py, numpy only): its self-checks, its
# r = 1 cross-check against the DiffLlama oracle (when torch is installed), and every committed
# tests/fixtures/hf/motif_* checkpoint against it (logits, decode = full forward).
source "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: python3-numpy is missing (run scripts/setup)"; exit 77; }
cd "$root/tools/oracle"
/usr/bin/python3 -B check_motif_model.py
