# The Python module as users install it: `pip install --no-build-isolation .` into a fresh venv
# (`python3 -m venv --system-site-packages`, for Debian's NumPy, pytest and matplotlib), offline,
# the module taken from this build directory (DIFFTX_BUILD_DIR: nothing is compiled again), then
# the pytest suite (python/tests) against the installed module, and `pip wheel` makes a wheel.
source "$(dirname "$0")/lib.bash"
build="$(cd "$(dirname "$difftx")" && pwd)"
python=/usr/bin/python3
ls "$build"/python/difftx/_difftx*.so > /dev/null 2>&1 ||
  { echo "SKIP: the Python module was not built in $build (pybind11-dev missing?)"; exit 77; }
"$python" -c "import venv, ensurepip, setuptools, wheel, pybind11, numpy, pytest, matplotlib" 2> /dev/null ||
  { echo "SKIP: $python lacks venv, ensurepip, setuptools, wheel, pybind11, numpy, pytest or matplotlib (run scripts/setup)"; exit 77; }

"$python" -m venv --system-site-packages "$work/venv"
export DIFFTX_BUILD_DIR="$build" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
"$work/venv/bin/pip" install --quiet --no-build-isolation --no-deps "$root" > "$work/pip.txt" 2>&1 ||
  { echo "FAIL: pip install"; cat "$work/pip.txt"; exit 1; }
where="$(cd "$work" && "$work/venv/bin/python" -c "import difftx, difftx._difftx as m; print(m.__file__)")"
case "$where" in
  "$work/venv/"*) ;;
  *) echo "FAIL: difftx imports from $where, not from the venv"; exit 1 ;;
esac
version="$(sed -n 's/^#define DIFFTX_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$root/include/difftx/difftx.h" | paste -sd.)"
"$work/venv/bin/pip" show difftx > "$work/show.txt"
expect_in "$work/show.txt" "Version: $version"

"$work/venv/bin/pip" wheel --quiet --no-build-isolation --no-deps -w "$work/wheels" "$root" > "$work/wheel.txt" 2>&1 ||
  { echo "FAIL: pip wheel"; cat "$work/wheel.txt"; exit 1; }
wheel="$(ls "$work"/wheels/difftx-*.whl)"
"$python" -m zipfile -l "$wheel" > "$work/wheel_files.txt"
expect_in "$work/wheel_files.txt" "difftx/__init__.py" "difftx/__init__.pyi" "difftx/py.typed" "difftx/_difftx"

cd "$work"
MPLBACKEND=Agg DIFFTX_BINARY="$difftx" "$work/venv/bin/python" -m pytest "$root/python/tests" -q -p no:cacheprovider
