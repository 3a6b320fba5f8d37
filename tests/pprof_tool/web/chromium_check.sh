#!/bin/sh
# The web UI in headless Chromium: pprof-tool --http=127.0.0.1:0 serves heap dumps of
# user_frames_prog.cc; Chromium loads the top table, the call graph and the timeline, and
#  - the page scripts run without errors and mark the page ready (data-hk-ready on <body>);
#  - the top table's DOM names the known functions; the call graph's SVG was set up for pan/zoom;
#  - the timeline's DOM has one band per function and a link per dump to its top table, and its
#    hover text carries the profiler's dump reason;
#  - the flame graph's SVG script ran and set up its frames;
#  - the pictures: distinct band colours, a time axis and file numbers on the timeline, header
#    lines printed once, the flame graph's frame as tall as its picture;
#  - the call graph view at its own size, panned and zoomed with real input events
#    (graph_view_check.py, through the DevTools protocol), nothing refused under the
#    server's Content-Security-Policy;
#  - a screenshot of every view (top, call graph, flame graph, peek, source, timeline) is kept in
#    <work dir>/screenshots/ as the run's artifact, and none is blank.
# The server is killed on exit whatever happens.
# Usage: chromium_check.sh <pprof-tool> <libheapkit.so> <program> <work dir>
# Exit 77 (ctest SKIP_RETURN_CODE) when no Chromium is installed.
set -u
pprof=$1 lib=$2 prog=$3 work=$4
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/home"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null' EXIT INT TERM

HEAPPROFILE="$work/prof" HEAP_PROFILE_INUSE_INTERVAL=2097152 TCMALLOC_SAMPLE_PARAMETER=1 \
  LD_PRELOAD="$lib" "$prog" 2>/dev/null
. "$(dirname "$0")/serve.sh"
serve_web_ui "$work" "$pprof" "$prog" "$work"/prof.*.heap
if [ -z "$url" ]; then
  echo "FAIL: the server did not print its address: $(cat "$work/server.out" "$work/server.err")"
  exit 1
fi

fail=0
run() {  # run <log> <args...>: headless Chromium, bounded in time, its own profile dir
  log=$1
  shift
  HOME="$work/home" timeout 60 "$chrome" --headless --no-sandbox --disable-gpu \
    --no-first-run --disable-extensions --disable-dev-shm-usage --virtual-time-budget=5000 \
    --user-data-dir="$work/home/profile" --enable-logging=stderr --v=0 "$@" 2>"$log"
}
check() {  # check <page> <file> <pattern> <what>
  if ! grep -q -- "$3" "$2"; then
    echo "FAIL: $1: $4"
    fail=1
  fi
}

for page in top graph timeline; do
  path=/ui/$page
  [ $page = graph ] && path=/ui/
  run "$work/$page.log" --dump-dom "$url$path" >"$work/$page.html"
  if grep -E "Uncaught|SyntaxError|ReferenceError|TypeError" "$work/$page.log"; then
    echo "FAIL: $path: JavaScript errors (see $work/$page.log)"
    fail=1
  fi
  check $path "$work/$page.html" '<body data-hk-ready="1"' "the page script did not run"
done
for f in app::FillVector app::FillString app::FillMap; do
  check /ui/top "$work/top.html" "<td class=\"name\"><a [^>]*>$f</a>" "the table does not name $f"
done
check /ui/ "$work/graph.html" '<svg[^>]*data-hk-ready="1"' "the call graph was not set up for pan/zoom"
check /ui/ "$work/graph.html" 'app::FillVector' "the call graph does not name app::FillVector"
check /ui/timeline "$work/timeline.html" 'class="band" data-name="app::FillVector"' "no band for app::FillVector"
check /ui/timeline "$work/timeline.html" 'href="/ui/top?si=inuse_space&amp;dump=1"' "dump 1 (.0001) does not link to its top table"
check /ui/timeline "$work/timeline.html" 'reason: [0-9]* MB currently in use' "the hover text has no dump reason"

# Pictures a designer would pass: the timeline's bands in distinct colours, a time axis (the
# dumps carry their time), dumps numbered as their files; the graph and flame graph pages print
# their header lines once (in the picture); the flame graph's frame takes the picture's height.
fills=$(grep -o '<polygon class="band"[^>]*fill="#[0-9a-f]*"' "$work/timeline.html" | grep -o 'fill="#[0-9a-f]*"')
if [ -z "$fills" ] || [ "$(printf '%s\n' "$fills" | sort | uniq -d)" != "" ]; then
  echo "FAIL: /ui/timeline: two bands share a colour: $(printf '%s ' $fills)"
  fail=1
fi
check /ui/timeline "$work/timeline.html" 'time since the first dump' "no time axis"
check /ui/timeline "$work/timeline.html" 'class="dump-number"[^>]*>8<' "the latest dump is not labelled 8 (its file .0008)"
if [ "$(grep -oE '>?Type: inuse_space(</text>|<br>)' "$work/graph.html" | wc -l)" != 1 ]; then  # SVG text or HTML legend
  echo "FAIL: /ui/: the header lines are not printed exactly once"
  fail=1
fi
run "$work/flamepage.log" --dump-dom "$url/ui/flamegraph" >"$work/flamepage.html"
if grep -q 'Type: inuse_space' "$work/flamepage.html"; then
  echo "FAIL: /ui/flamegraph: the header lines are printed above the picture that has them"
  fail=1
fi
check /ui/flamegraph "$work/flamepage.html" '<object id="flame"[^>]*style="height: [0-9]*px' \
  "the flame graph's frame did not take the picture's height (an empty band around it)"

run "$work/flame.log" --dump-dom "$url/ui/flamegraph.svg" >"$work/flame.html"
check /ui/flamegraph.svg "$work/flame.html" 'data-hk-ready="[1-9][0-9]*"' "the flame graph script did not set up its frames"
check /ui/flamegraph.svg "$work/flame.html" 'data-n="app::FillVector"' "the flame graph does not name app::FillVector"

# Screenshots of every view, kept as artifacts (a blank page compresses to a few KB).
mkdir -p "$work/screenshots"
for shot in top:/ui/top graph:/ui/ flamegraph:/ui/flamegraph peek:/ui/peek?f=FillVector \
            source:/ui/source?f=FillString timeline:/ui/timeline; do
  name=${shot%%:*} path=${shot#*:}
  png="$work/screenshots/$name.png"
  run "$work/shot-$name.log" --window-size=1200,800 --screenshot="$png" "$url$path" >/dev/null
  size=$(wc -c <"$png" 2>/dev/null || echo 0)
  if [ "$size" -lt 10000 ]; then
    echo "FAIL: the screenshot of $path is missing or blank ($size bytes, $png)"
    fail=1
  fi
done

# The call graph: labels readable at first, wheel, drag, keys and buttons (its own browser).
if ! HOME="$work/home" timeout 120 python3 "$(dirname "$0")/graph_view_check.py" "$chrome" "$url" "$work"; then
  echo "FAIL: the call graph view (graph_view_check.py)"
  fail=1
fi
# No page asked for anything the server's policy refuses (it logs "Refused to ...").
if grep -l "Content Security Policy\|Refused to" "$work"/*.log; then
  echo "FAIL: a page was refused something under its Content-Security-Policy (the logs above)"
  fail=1
fi

[ $fail -eq 0 ] && echo "PASS: top, graph, flame graph and timeline pages in Chromium; screenshots in $work/screenshots"
exit $fail
