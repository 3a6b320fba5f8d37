#!/usr/bin/env bash
# Files heapkit creates never follow planted links nor replace files it does not own. Usage:
#   run_planted_files.sh <privileged_victim> <pprof-tool> <workdir>
# Another user (uid 65534 here; the test runs as root, the case that matters) plants, in a
# shared directory, symbolic links and files of their own at the names heapkit will write: the
# final dump names and the temporary names older versions used (<final>.tmp.<pid>). Every
# planted target must stay untouched, each refusal must be one line, dumps must be mode 0600,
# and pprof-tool --output must keep a replaced file's mode.
set -u
victim=$1
pprof=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
chmod 1777 "$work"   # a shared, sticky directory like /tmp
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to plant files owned by another user"; exit 77; }

precious="$work/precious"
mkprecious() { printf 'precious contents\n' >"$precious"; chmod 0644 "$precious"; }
intact() { [[ $(cat "$precious") == "precious contents" ]] || fail "$1: the link's target was written"; }
plant_link() { ln -s "$precious" "$1" && chown -h 65534:65534 "$1"; }

# 1. HEAPPROFILE: links at the first final name and at the old predictable temporary name; a
#    foreign file at the second final name. The pid is fixed before exec.
mkprecious
status=0
bash -c '
  work=$1 victim=$2; pid=$$
  ln -s "$work/precious" "$work/prof.0001.heap"; chown -h 65534:65534 "$work/prof.0001.heap"
  ln -s "$work/precious" "$work/prof.0003.heap.tmp.$pid"; chown -h 65534:65534 "$work/prof.0003.heap.tmp.$pid"
  printf "theirs\n" >"$work/prof.0002.heap"; chown 65534:65534 "$work/prof.0002.heap"
  HEAPPROFILE="$work/prof" HEAP_PROFILE_ALLOCATION_INTERVAL=8m exec "$victim"
' _ "$work" "$victim" >"$work/profile.out" 2>"$work/profile.err" || status=$?
intact "HEAPPROFILE"
[[ $(cat "$work/prof.0002.heap") == theirs ]] || fail "another user's file was replaced"
[[ -L "$work/prof.0001.heap" ]] || fail "the planted link was replaced by a dump"
grep -q "failed to write heap profile $work/prof.0001.heap: is a symbolic link; refusing to replace it" \
  "$work/profile.err" || fail "no refusal line for the link: $(head -3 "$work/profile.err")"
grep -q "failed to write heap profile $work/prof.0002.heap: belongs to another user; refusing to replace it" \
  "$work/profile.err" || fail "no refusal line for the foreign file"
[[ -f "$work/prof.0003.heap" && ! -L "$work/prof.0003.heap" ]] || fail "dump 3 missing"
for f in "$work"/prof.000[3-9].heap; do
  [[ $(stat -c %a "$f") == 600 ]] || fail "$f has mode $(stat -c %a "$f"), expected 600"
done
[[ -z $(find "$work" -name 'prof.*.heap.tmp.*' ! -name "prof.0003.heap.tmp.*" | head -1) ]] \
  || fail "temporary files left behind"

# 2. The leak checker's .heap file: a link at its final name and at the old temporary name.
mkprecious
bash -c '
  work=$1 victim=$2; pid=$$; name=$(basename "$victim")
  ln -s "$work/precious" "$work/$name.$pid._main_-end.heap"
  chown -h 65534:65534 "$work/$name.$pid._main_-end.heap"
  HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work" exec "$victim"
' _ "$work" "$victim" >"$work/check.out" 2>"$work/check.err"
intact "HEAPCHECK (final name)"
grep -q "cannot write leak profile .*_main_-end.heap: is a symbolic link; refusing to replace it" \
  "$work/check.err" || fail "no refusal line from the checker: $(grep -i heap "$work/check.err" | head -3)"
grep -q "Leak check _main_ detected leaks of 33 bytes" "$work/check.err" || fail "the check did not run"
mkprecious
bash -c '
  work=$1 victim=$2; pid=$$; name=$(basename "$victim")
  ln -s "$work/precious" "$work/$name.$pid._main_-end.heap.tmp.$pid"
  HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work" exec "$victim"
' _ "$work" "$victim" >"$work/check2.out" 2>"$work/check2.err"
intact "HEAPCHECK (old temporary name)"
heap=$(ls "$work"/*._main_-end.heap 2>/dev/null | while read -r f; do [[ -L $f ]] || echo "$f"; done | head -1)
[[ -n $heap ]] || fail "the checker wrote no .heap file next to a planted temporary name"
[[ $(stat -c %a "$heap") == 600 ]] || fail "$heap has mode $(stat -c %a "$heap")"

# 3. pprof-tool --output.
profile=$(ls "$work"/prof.0003.heap)
mkprecious
plant_link "$work/out.txt"
if "$pprof" --text --output="$work/out.txt" "$victim" "$profile" 2>"$work/pprof.err"; then
  fail "pprof-tool wrote through a link owned by another user"
fi
intact "pprof-tool --output (foreign link)"
grep -q "out.txt is a symbolic link owned by another user; refusing to follow it" "$work/pprof.err" \
  || fail "pprof-tool refusal: $(cat "$work/pprof.err")"
printf 'theirs\n' >"$work/theirs.txt" && chown 65534:65534 "$work/theirs.txt"
if "$pprof" --text --output="$work/theirs.txt" "$victim" "$profile" 2>"$work/pprof2.err"; then
  fail "pprof-tool replaced another user's file"
fi
[[ $(cat "$work/theirs.txt") == theirs ]] || fail "another user's --output file changed"
grep -q "belongs to another user; refusing to replace it" "$work/pprof2.err" || fail "$(cat "$work/pprof2.err")"
printf 'old\n' >"$work/mine.txt" && chmod 0640 "$work/mine.txt"
"$pprof" --text --output="$work/mine.txt" "$victim" "$profile" 2>/dev/null || fail "own file not replaced"
[[ $(stat -c %a "$work/mine.txt") == 640 ]] || fail "replaced file's mode $(stat -c %a "$work/mine.txt"), expected 640"
grep -q 'main' "$work/mine.txt" || fail "replaced file has no report"
"$pprof" --text --output=/dev/stdout "$victim" "$profile" >"$work/stdout.txt" 2>/dev/null \
  || fail "--output=/dev/stdout (a root-owned link to a stream) no longer works"
[[ -s "$work/stdout.txt" ]] || fail "--output=/dev/stdout wrote nothing"
[[ -z $(find "$work" -name '*.txt.tmp.*' | head -1) ]] || fail "pprof-tool left temporaries"
echo "PASS: planted links and foreign files are never written; dumps are 0600; modes kept"
