#!/usr/bin/env bash
# pprof-tool never blocks on or reads what a hostile profile's MAPPED_LIBRARIES names. Usage:
#   run_hostile_maps.sh <pprof-tool> <workdir>
# The maps name, as executable mappings, a FIFO with no writer, a link to /dev/zero and a link
# to /proc/self/fd/0 (both pass a "/dev/" name filter), and a directory. pprof-tool must answer
# at once (bounded here by `timeout`), with one warning per file and exit status 0.
set -u
pprof=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
mkfifo "$work/fifo"
ln -s /dev/zero "$work/zero"
ln -s /proc/self/fd/0 "$work/stdin"
mkdir "$work/dir"
{
  echo "heap profile:      1:      100 [     1:      100] @ heapprofile"
  echo "     1:      100 [     1:      100] @ 0x0000000000401010 0x0000000010001010 0x0000000020001010 0x0000000030001010"
  echo
  echo "MAPPED_LIBRARIES:"
  echo "00400000-00402000 r-xp 00000000 00:00 1 $work/fifo"
  echo "10000000-10002000 r-xp 00000000 00:00 2 $work/zero"
  echo "20000000-20002000 r-xp 00000000 00:00 3 $work/stdin"
  echo "30000000-30002000 r-xp 00000000 00:00 4 $work/dir"
} >"$work/hostile.heap"
# stdin is a FIFO with no writer too, so that following /proc/self/fd/0 would block.
mkfifo "$work/stdin-fifo"
timeout 20 "$pprof" --text "$work/hostile.heap" <"$work/stdin-fifo" >"$work/out" 2>"$work/err" &
pid=$!
exec 3>"$work/stdin-fifo"   # let the shell's redirection open; we never write
wait $pid
status=$?
exec 3>&-
[[ $status != 124 ]] || fail "pprof-tool hung on a hostile MAPPED_LIBRARIES (killed after 20 s)"
[[ $status == 0 ]] || fail "pprof-tool exited $status: $(cat "$work/err")"
for name in fifo zero stdin dir; do
  grep -q "$work/$name: not a regular file; its addresses are shown as $name+0x<offset>" "$work/err" \
    || fail "no one-line warning for $name: $(cat "$work/err")"
done
echo "PASS: FIFOs, device links and directories in MAPPED_LIBRARIES are refused without blocking"
