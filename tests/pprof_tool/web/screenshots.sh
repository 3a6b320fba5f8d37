#!/bin/sh
# Regenerates the README's pictures of pprof-tool's web UI and timeline, from heap dumps of the
# test program user_frames_prog.cc (tests/pprof_tool/e2e/):
#   web-ui.png     `pprof-tool --http` in headless Chromium: the call graph view (/ui/)
#   timeline.png   `pprof-tool --timeline=t.svg`, the SVG rendered by Chromium
# Usage (from a build): tests/pprof_tool/web/screenshots.sh build/pprof-tool/pprof-tool \
#          build/libheapkit.so build/tests/pprof_tool/e2e/pprof_user_frames_O2 [out dir]
# The out dir defaults to pprof-tool/docs/images of this checkout. Needs chromium.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pprof=$(realpath "$1") lib=$(realpath "$2") prog=$(realpath "$3")
out=${4:-$(cd "$here/../../.." && pwd)/pprof-tool/docs/images}
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
mkdir -p "$out" "$work/home" "$work/dumps"

# Several dumps (one per 2 MB of growth); the file names are what the pictures show.
(cd "$work/dumps" && HEAPPROFILE=prog HEAP_PROFILE_INUSE_INTERVAL=2097152 \
  TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$lib" "$prog" 2>/dev/null)

shot() {  # shot <png> <width>,<height> <url>
  HOME="$work/home" timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-extensions --disable-dev-shm-usage --hide-scrollbars --virtual-time-budget=5000 \
    --user-data-dir="$work/home/profile" --window-size="$2" --screenshot="$1" "$3" 2>/dev/null
}

cd "$work/dumps"
"$pprof" --timeline="$work/timeline.svg" "$prog" prog.*.heap
shot "$out/timeline.png" 1000,440 "file://$work/timeline.svg"

. "$here/serve.sh"
serve_web_ui "$work" "$pprof" "$prog" prog.*.heap
[ -n "$url" ] || { echo "screenshots.sh: the server did not start" >&2; exit 1; }
shot "$out/web-ui.png" 1200,760 "$url/ui/"
ls -l "$out/web-ui.png" "$out/timeline.png"
