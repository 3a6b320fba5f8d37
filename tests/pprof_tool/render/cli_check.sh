#!/bin/sh
# End to end: pprof-tool's picture outputs on a real profile written by a generated program
# (tests/bench/render/gen_program.py, built by this directory's CMakeLists.txt).
# Usage: cli_check.sh <pprof-tool> <fixture program> <work dir>
set -u
tool=$1
prog=$2
work=$3
probe="$(dirname "$0")/svg_probe.py"
python=${PYTHON:-python3}
rm -rf "$work"
mkdir -p "$work/empty" "$work/tmp"
fail=0
die() { echo "FAIL: $*"; fail=1; }
magic() {  # magic <file> <expected prefix (printf format)>
  want=$(printf "$2" | od -An -c)
  got=$(head -c "$(printf "$2" | wc -c)" "$1" | od -An -c)
  [ "$want" = "$got" ] || die "$1 does not start with $(printf "$2" | od -An -c)"
}
size_between() {  # size_between <file> <min> <max>
  s=$(wc -c <"$1")
  [ "$s" -ge "$2" ] && [ "$s" -le "$3" ] || die "$1 has $s bytes, want $2..$3"
}

# Same addresses in every run (--base needs comparable profiles).
norand=""
if setarch "$(uname -m)" -R true 2>/dev/null; then norand="setarch $(uname -m) -R"; fi
$norand "$prog" "$work/p.heap" 48 0 >/dev/null || { echo "FAIL: fixture did not run"; exit 1; }
$norand "$prog" "$work/base.heap" 48 24 >/dev/null || { echo "FAIL: fixture did not run"; exit 1; }

run() { timeout 60 "$tool" "$@" "$prog" "$work/p.heap" 2>"$work/stderr"; }

run --dot --output="$work/g.dot" || die "--dot failed: $(cat "$work/stderr")"
grep -q '^digraph ' "$work/g.dot" || die "--dot: not a digraph"
grep -q 'bench::layer2::' "$work/g.dot" || die "--dot: top function missing"
grep -q 'legend' "$work/g.dot" || die "--dot: no legend"

run --svg --output="$work/g.svg" || die "--svg failed: $(cat "$work/stderr")"
texts=$(timeout 30 "$python" "$probe" texts "$work/g.svg") || die "--svg: not XML: $texts"
echo "$texts" | grep -q 'bench::layer2::Dispatch' || die "--svg: top function missing"
echo "$texts" | grep -q 'main' || die "--svg: main missing"

run --png --output="$work/g.png" || die "--png failed: $(cat "$work/stderr")"
magic "$work/g.png" '\211PNG\r\n\032\n'
size_between "$work/g.png" 5000 5000000
run --pdf --output="$work/g.pdf" || die "--pdf failed: $(cat "$work/stderr")"
magic "$work/g.pdf" '%%PDF-'
size_between "$work/g.pdf" 2000 5000000
run --ps --output="$work/g.ps" || die "--ps failed: $(cat "$work/stderr")"
magic "$work/g.ps" '%%!PS-Adobe-'

# stdout when there is no --output.
run --svg >"$work/stdout.svg" || die "--svg to stdout failed"
cmp -s "$work/stdout.svg" "$work/g.svg" || die "--svg to stdout differs from --output"

# --web: a temp file, and where it is.
out=$(TMPDIR="$work/tmp" BROWSER=true DISPLAY= run --web) || die "--web failed: $(cat "$work/stderr")"
path=$(echo "$out" | sed -n 's/^Call graph written to \([^ ]*\.svg\).*/\1/p')
[ -n "$path" ] && [ -s "$path" ] || die "--web: no file named in: $out"
case "$path" in "$work/tmp/"*) ;; *) die "--web: $path is not under TMPDIR";; esac

# Flame graphs.
run --flamegraph="$work/f.svg" || die "--flamegraph failed: $(cat "$work/stderr")"
frames=$(timeout 30 "$python" "$probe" frames "$work/f.svg") || die "--flamegraph: not XML: $frames"
n=$(echo "$frames" | grep -c .)
[ "$n" -ge 20 ] || die "--flamegraph: only $n frames"
echo "$frames" | grep -q 'bench::layer0::' || die "--flamegraph: layer0 missing"
run --icicle="$work/i.svg" || die "--icicle failed: $(cat "$work/stderr")"
timeout 30 "$python" "$probe" check "$work/i.svg" >/dev/null || die "--icicle: not XML"

# --base: negative values, diff colours, still valid.
timeout 60 "$tool" --flamegraph="$work/d.svg" "$prog" "$work/p.heap" --base="$work/base.heap" \
  2>"$work/stderr" || die "--base --flamegraph failed: $(cat "$work/stderr")"
grep -q 'net change' "$work/d.svg" || die "--base flame graph is not a diff"
timeout 60 "$tool" --dot "$prog" "$work/p.heap" --base="$work/base.heap" >"$work/d.dot" \
  2>"$work/stderr" || die "--base --dot failed: $(cat "$work/stderr")"
# Shrink colours: some node border with more green than red; growth: more red than green.
greens=$("$python" - "$work/d.dot" <<'PY'
import re, sys
g = r = 0
for c in re.findall(r'^N\d+ \[.* color="#([0-9a-f]{6})"', open(sys.argv[1]).read(), re.M):
    red, green = int(c[0:2], 16), int(c[2:4], 16)
    g += green > red
    r += red > green
print(g, r)
PY
)
set -- $greens
[ "${1:-0}" -ge 1 ] && [ "${2:-0}" -ge 1 ] || die "--base --dot: want green and red nodes, got $greens"

# --heapcheck: leak sites marked.
run --heapcheck --dot --output="$work/h.dot" || die "--heapcheck --dot failed"
grep -q 'peripheries=2' "$work/h.dot" || die "--heapcheck: no leak site highlighted"

# Missing graphviz plugin configuration: one line, exit status 2, the fix.
GVBINDIR="$work/empty" run --svg --output="$work/x.svg"
rc=$?
[ "$rc" -eq 2 ] || die "missing plugins: exit status $rc, want 2"
grep -q 'Layout type: "dot" not recognized' "$work/stderr" || die "missing plugins: $(cat "$work/stderr")"
grep -q 'dot -c' "$work/stderr" || die "missing plugins: no fix named: $(cat "$work/stderr")"
[ "$(grep -c . "$work/stderr")" -eq 1 ] || die "missing plugins: not one line: $(cat "$work/stderr")"

# Unwritable output.
run --png --output=/nonexistent-dir/g.png
rc=$?
[ "$rc" -ne 0 ] || die "unwritable --output accepted"
grep -q '/nonexistent-dir/g.png' "$work/stderr" || die "unwritable output: $(cat "$work/stderr")"

[ "$fail" -eq 0 ] && echo "PASS: pprof-tool --dot/--svg/--png/--pdf/--ps/--web/--flamegraph/--icicle"
exit "$fail"
