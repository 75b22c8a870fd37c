# The Phi-4-mini-flash oracle (tools/oracle/check_phi4flash_model.py, numpy only): its self-checks,
# its parallel form against its recurrent form, and every committed tests/fixtures/phi4flash/*
# checkpoint against both.
source "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: python3-numpy is missing (run scripts/setup)"; exit 77; }
cd "$root/tools/oracle"
/usr/bin/python3 -B check_phi4flash_model.py
