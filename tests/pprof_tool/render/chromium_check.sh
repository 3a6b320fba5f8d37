#!/bin/sh
# Opens the flame graphs written by pprof_render_samples in headless Chromium and checks that
#  - the page loads and its script runs without console errors ("Uncaught ...");
#  - the script initialised every frame (it sets data-hk-ready on the <svg> root);
#  - ?zoom=<regex> zooms: frames outside the zoomed one become hidden, "Reset Zoom" appears;
#  - ?search=<regex> highlights exactly the matching frames and reports the matched share;
#  - a screenshot shows the frames (enough pixels in the flame palette).
# Usage: chromium_check.sh <pprof_render_samples binary> <work dir>
# Exit 77 (ctest SKIP_RETURN_CODE) when no Chromium is installed.
set -u
samples=$1
work=$2
probe="$(dirname "$0")/svg_probe.py"
python=${PYTHON:-python3}
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/home"
"$samples" "$work" || { echo "FAIL: $samples could not write the samples"; exit 1; }

fail=0
run() {  # run <log> <args...>: headless Chromium, bounded in time, its own profile dir
  log=$1
  shift
  HOME="$work/home" timeout 60 "$chrome" --headless --no-sandbox --disable-gpu \
    --no-first-run --disable-extensions --disable-dev-shm-usage \
    --user-data-dir="$work/home/profile" --enable-logging=stderr --v=0 "$@" 2>"$log"
}
check_log() {
  if grep -E "Uncaught|SyntaxError|ReferenceError|TypeError" "$1"; then
    echo "FAIL: JavaScript errors while loading $2 (see $1)"
    fail=1
  fi
}

for svg in flame icicle diff; do
  run "$work/$svg.dom.log" --dump-dom "file://$work/$svg.svg" >"$work/$svg.dom.html"
  check_log "$work/$svg.dom.log" "$svg.svg"
  frames=$(grep -c 'class="f"' "$work/$svg.svg")
  if ! grep -q "data-hk-ready=\"$frames\"" "$work/$svg.dom.html"; then
    echo "FAIL: $svg.svg: the script did not initialise its $frames frames"
    fail=1
  fi
done

# Zoom into the Parser subtree and search for Arena frames through the URL hooks.
run "$work/zoom.log" --dump-dom "file://$work/flame.svg?search=Arena&zoom=%5EParser" >"$work/zoom.html"
check_log "$work/zoom.log" "flame.svg?zoom"
hidden=$(grep -o 'class="f hk-hidden"' "$work/zoom.html" | wc -l)
parents=$(grep -o 'class="f hk-parent"' "$work/zoom.html" | wc -l)
if [ "$hidden" -lt 10 ] || [ "$parents" -ne 2 ]; then
  echo "FAIL: zoom: $hidden hidden frames, $parents dimmed parents (want >= 10 and 2: all, main)"
  fail=1
fi
if ! grep -q 'id="hk-reset" class="hk-button"' "$work/zoom.html"; then
  echo "FAIL: zoom: the Reset Zoom button did not appear"
  fail=1
fi

arena=$(grep -c 'data-n="Arena::NewBlock()"' "$work/flame.svg")
magenta=$(grep -o 'fill="#e040e0"' "$work/zoom.html" | wc -l)
if [ "$magenta" -ne "$arena" ] || ! grep -q 'Matched: [0-9.]*% ('"$arena"' frames)' "$work/zoom.html"; then
  echo "FAIL: search: $magenta highlighted frames, want $arena, with a Matched: line"
  fail=1
fi

# Screenshot: the frames must be there (the palette is red/orange/yellow).
run "$work/shot.log" --screenshot="$work/flame.png" --window-size=1200,800 "file://$work/flame.svg"
check_log "$work/shot.log" "flame.svg (screenshot)"
if [ ! -s "$work/flame.png" ]; then
  echo "FAIL: no screenshot written"
  exit 1
fi
stats=$(timeout 60 "$python" "$probe" pngstats "$work/flame.png") || { echo "FAIL: $stats"; exit 1; }
echo "screenshot $work/flame.png: width height warm_fraction colours = $stats"
warm=$(echo "$stats" | awk '{ print ($3 >= 0.10) ? "yes" : "no" }')
if [ "$warm" != yes ]; then
  echo "FAIL: the screenshot shows too few flame-coloured pixels"
  fail=1
fi

[ "$fail" -eq 0 ] && echo "PASS: flame graphs load, initialise, zoom and render in Chromium"
exit "$fail"
