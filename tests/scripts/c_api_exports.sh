# libdifftx.so exports the C API and nothing else: its defined dynamic symbols are exactly the
# functions include/difftx/difftx.h declares (DIFFTX_API), and its SONAME carries the ABI's version
# (MAJOR, or MAJOR.MINOR while MAJOR is 0).
source "$(dirname "$0")/lib.bash"
lib="$(dirname "$difftx")/lib/libdifftx.so"
[ -f "$lib" ] || { echo "SKIP: $lib was not built (the difftx_shared target)"; exit 77; }
command -v nm > /dev/null || { echo "SKIP: nm is missing (binutils)"; exit 77; }
header="$root/include/difftx/difftx.h"
sed -n 's/^DIFFTX_API .*[ *]\(difftx_[a-z0-9_]*\)(.*/\1/p' "$header" | sort > "$work/declared.txt"
[ "$(wc -l < "$work/declared.txt")" -ge 25 ] ||
  { echo "FAIL: read only these declarations:"; cat "$work/declared.txt"; exit 1; }
nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort > "$work/exported.txt"
if ! diff "$work/declared.txt" "$work/exported.txt" > "$work/diff.txt"; then
  echo "FAIL: libdifftx.so's exports differ from difftx.h's functions (< declared only, > exported only):"
  head -40 "$work/diff.txt"
  exit 1
fi
abi="$(abi_version "$header")"
readelf -d "$lib" > "$work/dynamic.txt"  # from a file: `readelf | grep -q` under pipefail can die of SIGPIPE
grep -q "Library soname: \[libdifftx.so.$abi\]" "$work/dynamic.txt" ||
  { echo "FAIL: the SONAME is not libdifftx.so.$abi"; cat "$work/dynamic.txt"; exit 1; }
echo "ok: $(wc -l < "$work/exported.txt") symbols, all of them the C API's"
