# The installed library as its users take it: `cmake --install` into a temporary prefix (headers,
# libdifftx.so with its SONAME, libdifftx.a, the CMake package, difftx.pc, the binary), the C
# examples built against it with pkg-config (C11, -pedantic -Werror) and with CMake's
# find_package (shared, static, and a C++ program), their logits checked against the oracle
# fixtures (tests/fixtures/oracle: float64 PyTorch) and their greedy stream against `difftx
# generate`.
source "$(dirname "$0")/lib.bash"
build="$(cd "$(dirname "$difftx")" && pwd)"
[ -f "$build/lib/libdifftx.so" ] && [ -f "$build/lib/libdifftx.a" ] ||
  { echo "SKIP: $build/lib has no libdifftx.so / libdifftx.a (build the difftx_shared and difftx_static targets)"; exit 77; }
for tool in cc c++ pkg-config readelf; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is missing"; exit 77; }
done
py=/usr/bin/python3  # Debian's, with NumPy (scripts/setup)
"$py" -c "import numpy" 2> /dev/null || { echo "SKIP: $py lacks numpy"; exit 77; }

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.txt" || { cat "$work/install.txt"; exit 1; }
for f in include/difftx/difftx.h lib/libdifftx.a lib/cmake/difftx/difftxConfig.cmake \
         lib/cmake/difftx/difftxConfigVersion.cmake lib/pkgconfig/difftx.pc bin/difftx; do
  [ -f "$prefix/$f" ] || { echo "FAIL: the install has no $f"; ls -R "$prefix"; exit 1; }
done
version="$(sed -n 's/^#define DIFFTX_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$root/include/difftx/difftx.h" | paste -sd.)"
abi="$(abi_version "$root/include/difftx/difftx.h")"
readelf -d "$prefix/lib/libdifftx.so" > "$work/dynamic.txt"
grep -q "Library soname: \[libdifftx.so.$abi\]" "$work/dynamic.txt" ||
  { echo "FAIL: libdifftx.so's SONAME is not libdifftx.so.$abi"; cat "$work/dynamic.txt"; exit 1; }
[ -L "$prefix/lib/libdifftx.so" ] && [ -f "$prefix/lib/libdifftx.so.$abi" ] ||
  { echo "FAIL: libdifftx.so is not a link to libdifftx.so.$abi"; ls -l "$prefix/lib"; exit 1; }
[ "$("$prefix/bin/difftx" --version | head -1)" = "difftx $version" ] ||
  { echo "FAIL: difftx --version does not start with 'difftx $version'"; "$prefix/bin/difftx" --version; exit 1; }

# pkg-config: the shared library, and the static one with --static's private libraries.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion difftx)" = "$version" ] ||
  { echo "FAIL: difftx.pc's version"; pkg-config --modversion difftx; exit 1; }
mkdir "$work/pc"
cc -std=c11 -Wall -Wextra -pedantic -Werror "$root/examples/c/logits.c" $(pkg-config --cflags --libs difftx) \
  -Wl,-rpath,"$prefix/lib" -o "$work/pc/logits"
cc -std=c11 -Wall -Wextra -pedantic -Werror "$root/examples/c/generate.c" $(pkg-config --cflags --libs difftx) \
  -Wl,-rpath,"$prefix/lib" -o "$work/pc/generate"
cc -std=c11 "$root/examples/c/logits.c" $(pkg-config --cflags difftx) "$prefix/lib/libdifftx.a" \
  $(pkg-config --static --libs-only-other --libs-only-l difftx | sed 's/-ldifftx//') -o "$work/pc/logits_static"
# ldd's output is taken whole before it is searched: the loader writes it line by line, and a
# grep -q that stops reading at the match made it die of SIGPIPE, a failed pipeline under pipefail.
ldd "$work/pc/logits_static" > "$work/ldd.txt"
grep -q libdifftx "$work/ldd.txt" && { echo "FAIL: the static example loads libdifftx.so"; exit 1; }
# The header is C++ too.
c++ -std=c++17 -Wall -Wextra -pedantic -Werror -fsyntax-only -x c++ "$prefix/include/difftx/difftx.h"

# find_package(difftx): the examples' CMake project.
cmake -S "$root/examples/cmake" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$work/cmake.txt" 2>&1 || { cat "$work/cmake.txt"; exit 1; }
cmake --build "$work/cmake" -j 2 > "$work/cmake_build.txt" 2>&1 || { cat "$work/cmake_build.txt"; exit 1; }
ldd "$work/cmake/logits" > "$work/ldd.txt"
grep -q "$prefix/lib/libdifftx.so.$abi" "$work/ldd.txt" ||
  { echo "FAIL: the find_package example does not load the installed libdifftx.so"; cat "$work/ldd.txt"; exit 1; }

# While MAJOR is 0 each MINOR is its own ABI: a consumer asking for the one before is refused.
if [ "${version%%.*}" = 0 ] && [ "$(echo "$version" | cut -d. -f2)" -gt 0 ]; then
  older="0.$(( $(echo "$version" | cut -d. -f2) - 1 ))"
  mkdir -p "$work/older"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(older LANGUAGES C CXX)\nfind_package(difftx %s CONFIG QUIET)\nmessage(STATUS "found=${difftx_FOUND}")\n' \
    "$older" > "$work/older/CMakeLists.txt"
  cmake -S "$work/older" -B "$work/older/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/older.txt" 2>&1 ||
    { cat "$work/older.txt"; exit 1; }
  grep -q "found=0" "$work/older.txt" ||
    { echo "FAIL: find_package(difftx $older) took the installed $version"; cat "$work/older.txt"; exit 1; }
fi

# Logits: every oracle fixture's first sequence, from every build of the example.
for fixture in "$root"/tests/fixtures/oracle/*/; do
  ids="$("$py" - "$fixture/expected.safetensors" <<'PY'
import json, struct, sys
import numpy as np
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]; header = json.loads(f.read(n)); data = f.read()
info = header["inputs"]; begin, end = info["data_offsets"]
print(" ".join(map(str, np.frombuffer(data[begin:end], "<i4").reshape(info["shape"])[0])))
PY
)"
  for exe in "$work/pc/logits" "$work/pc/logits_static" "$work/cmake/logits" "$work/cmake/logits_static"; do
    "$exe" "$fixture" "$work/logits.f32" $ids > "$work/argmax.txt"
    "$py" - "$fixture/expected.safetensors" "$work/logits.f32" "$exe $fixture" <<'PY'
import json, struct, sys
import numpy as np
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]; header = json.loads(f.read(n)); data = f.read()
info = header["logits"]; begin, end = info["data_offsets"]
want = np.frombuffer(data[begin:end], "<f4").reshape(info["shape"])[0].astype(np.float64)
got = np.fromfile(sys.argv[2], "<f4").astype(np.float64)
if got.size != want.size:
    sys.exit(f"FAIL: {sys.argv[3]}: {got.size} logits, the oracle has {want.size}")
err, scale = np.abs(got.reshape(want.shape) - want).max(), np.abs(want).max()
if err > 2e-5 + 2e-5 * scale:  # tests/model/oracle_test.cpp's tolerance
    sys.exit(f"FAIL: {sys.argv[3]}: logits differ from the oracle's by {err:.3g} (scale {scale:.3g})")
PY
  done
done

# Generation: the engine's greedy stream is `difftx generate --temperature 0`'s continuation.
motif="$root/tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer"
for exe in "$work/pc/generate" "$work/cmake/generate"; do
  "$exe" "$motif" "The state of the" 16 > "$work/c.txt" 2> "$work/c_err.txt" || { cat "$work/c_err.txt"; exit 1; }
  expect_in "$work/c_err.txt" "generated"
  "$difftx" generate --model "$motif" --prompt "The state of the" --max-new-tokens 16 --temperature 0 \
    > "$work/cli.txt" 2> /dev/null
  [ "The state of the$(cat "$work/c.txt")" = "$(cat "$work/cli.txt")" ] ||
    { echo "FAIL: $exe's stream differs from difftx generate's:"; cat "$work/c.txt"; echo ---; cat "$work/cli.txt"; exit 1; }
done
"$work/cmake/score" "$motif" "The state of the Union" > "$work/score.txt"
expect_in "$work/score.txt" "nats per token"
echo "ok: installed to a temporary prefix; pkg-config and find_package builds give the oracle's logits and the CLI's stream"
