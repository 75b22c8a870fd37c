# `difftx experiment report` renders the committed results.json fixtures into a page that
# headless Chromium really shows: every chart .svg parses as XML, loads as an <img> with a
# non-zero size, is shown and draws ink (in each model's colour where the chart has a legend),
# and a screenshot of the page is not blank. The checks must be able to fail: a broken SVG and
# a blank page are put through them too and must be rejected.
source "$(dirname "$0")/lib.bash"
chromium="${DIFFTX_CHROMIUM:-/usr/bin/chromium}"  # Debian's; the variable only serves to test the skip
if [ ! -x "$chromium" ]; then
  echo "SKIP: $chromium is missing (scripts/setup installs Debian's chromium); the report page was not checked"
  exit 77
fi
check="$root/tests/scripts/page_check.py"

fail() { echo "FAIL: $*" >&2; exit 1; }

# run_chromium ARGS... URL: a fresh profile each time, nothing fetched from the network.
run_chromium() {
  local profile
  profile="$(mktemp -d "$work/profile.XXXXXX")"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$profile" "$@" 2>>"$work/chromium.log"
}

# Parse every chart with Python's XML parser (an independent check of well-formedness).
check_svg_xml() {
  python3 - "$1"/*.svg <<'PY'
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg", (path, root.tag)
print("xml ok: %d charts" % (len(sys.argv) - 1))
PY
}

# check_page DIR: the charts of DIR/index.html load, are shown and drawn.
check_page() {
  python3 "$check" inject "$1/index.html" "$1/check.html"
  run_chromium --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom "file://$1/check.html" \
    > "$1/dom.html"
  python3 "$check" images "$1/dom.html" "$1"
}

# check_screenshot DIR PAGE: a screenshot of DIR/PAGE is not blank.
check_screenshot() {
  run_chromium --force-device-scale-factor=0.5 --window-size=1100,5200 --screenshot="$1/page.png" "file://$1/$2" \
    > /dev/null
  [ -s "$1/page.png" ] || fail "chromium wrote no screenshot of $1/$2: $(tail -5 "$work/chromium.log")"
  python3 "$check" png "$1/page.png"
}

render() {  # render RESULTS DIR EXPECTED_CHARTS
  "$difftx" experiment report --results "$1" --out "$2" > "$work/render.log" ||
    fail "difftx experiment report failed: $(cat "$work/render.log")"
  [ -s "$2/index.html" ] && [ -s "$2/results.json" ] || fail "no index.html or results.json in $2"
  local n
  n="$(find "$2" -name '*.svg' | wc -l)"
  [ "$n" = "$3" ] || fail "expected $3 charts in $2, found $n"
}

echo "== full fixture: three models, every optional object"
render "$root/tests/fixtures/report/results.json" "$work/full" 6
check_svg_xml "$work/full"
check_page "$work/full"
check_screenshot "$work/full" index.html

echo "== minimal fixture: no optional objects"
render "$root/tests/fixtures/report/results_minimal.json" "$work/minimal" 1
grep -q "Not drawn: NIAH accuracy heatmap" "$work/minimal/index.html" || fail "the minimal page does not say what is missing"
check_svg_xml "$work/minimal"
check_page "$work/minimal"
check_screenshot "$work/minimal" index.html

echo "== the checks reject a broken chart and a blank page"
cp -r "$work/full" "$work/broken"
sed -i 's#</svg>##' "$work/broken/outliers.svg"  # truncated document: no closing tag
if check_page "$work/broken" > "$work/broken.log" 2>&1; then
  fail "the page check accepted a broken SVG: $(cat "$work/broken.log")"
fi
grep -q "outliers.svg did not load" "$work/broken.log" || fail "unexpected failure: $(cat "$work/broken.log")"
printf '<!DOCTYPE html><html><body></body></html>\n' > "$work/broken/blank.html"
if check_screenshot "$work/broken" blank.html > "$work/blank.log" 2>&1; then
  fail "the screenshot check accepted a blank page: $(cat "$work/blank.log")"
fi
grep -q "blank" "$work/blank.log" || fail "unexpected failure: $(cat "$work/blank.log")"

echo "== errors name the key"
cp "$root/tests/fixtures/report/results_minimal.json" "$work/bad.json"
sed -i '0,/"tokens_per_model"/s//"tokens_per_modle"/' "$work/bad.json"
if "$difftx" experiment report --results "$work/bad.json" --out "$work/bad" > "$work/bad.log" 2>&1; then
  fail "a results.json without setup.tokens_per_model was accepted"
fi
grep -qF "bad.json: setup: missing key 'tokens_per_model'" "$work/bad.log" || fail "unclear error: $(cat "$work/bad.log")"
echo "PASS"
