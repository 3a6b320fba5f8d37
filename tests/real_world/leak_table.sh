#!/usr/bin/env bash
# Real programs (Debian's own binaries) under heapkit's leak checker, valgrind and LeakSanitizer.
#
#   leak_table.sh <libheapkit.so> <src dir> table      the RESULTS.md table (markdown on stdout):
#                                                       leaked bytes/objects and wall time of each
#                                                       tool, and whether heapkit agrees with
#                                                       valgrind (definitely + indirectly lost)
#   leak_table.sh <libheapkit.so> <src dir> check NAME  one program under heapkit only (ctest,
#                                                       label real_programs): no signal exit, the
#                                                       exit status and stdout of the plain run,
#                                                       a well-formed report or none, no stall
#
# heapkit runs with HEAPCHECK=normal HEAP_CHECK_ERROR_EXIT_CODE=0 and the report in a file
# (HEAP_CHECK_REPORT_PATH); LeakSanitizer as its standalone runtime preloaded
# (LD_PRELOAD=liblsan.so.0: the binaries are not instrumented); valgrind 3.19 memcheck
# --leak-check=full. Programs whose package is missing are skipped.
set -euo pipefail
lib=$(realpath "$1") src=$(realpath "$2") what=$3 only=${4:-}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in"
seq 1 200000 | sed 's/$/ line of text/' | shuf --random-source=<(yes) >"$work/in/lines"
cp /usr/bin/bash "$work/in/bash.bin"

# name | command (run with bash -c from $work; $IN is the input directory)
programs=(
  "tar-create|tar -cf out.tar -C /usr/include/linux ."
  "tar-list|tar -tf out.tar"
  "sort|sort -n in/lines"
  "xz-T2|xz -T2 -k -c in/bash.bin"
  "git-log|git -C $src log --oneline -n 200"
  "perl-hash|perl -e 'my %h; \$h{\$_} = \$_ x 3 for 1 .. 50000; print scalar(keys %h), \"\\n\"'"
  "python3-json|/usr/bin/python3 -c 'import json; print(len(json.dumps(list(range(50000)))))'"
  "sqlite3|sqlite3 :memory: 'create table t(x); with recursive c(i) as (select 1 union all select i+1 from c where i < 20000) insert into t select i from c; select count(*), sum(x) from t;'"
  "curl-file|curl -s file:///etc/services"
  "openssl-dgst|openssl dgst -sha256 in/bash.bin"
  "gzip|gzip -c in/lines"
)

wall() { awk '/^WALL / {print $2}' "$1"; }

# run_tool TOOL NAME CMD: stdout in $work/TOOL.out, status in $work/TOOL.rc, wall in $work/TOOL.time
run_tool() {
  local tool=$1 name=$2 cmd=$3 env=()
  rm -f "$work"/hk.* "$work"/lsan.*
  case $tool in
    plain) ;;
    heapkit) env=(LD_PRELOAD="$lib" HEAPCHECK=normal HEAP_CHECK_ERROR_EXIT_CODE=0
                  HEAP_CHECK_DUMP_DIRECTORY="$work" HEAP_CHECK_REPORT_PATH="$work/hk") ;;
    lsan) env=(LD_PRELOAD=liblsan.so.0 LSAN_OPTIONS="exitcode=0:log_path=$work/lsan") ;;
  esac
  (cd "$work" && if [[ $tool == valgrind ]]; then
     /usr/bin/time -f "WALL %e" -o "$work/$tool.time" bash -c "exec valgrind \
       --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=none \
       --log-file=$work/vg.log $cmd"
   else
     env "${env[@]}" /usr/bin/time -f "WALL %e" -o "$work/$tool.time" bash -c "exec $cmd"
   fi) >"$work/$tool.out" 2>"$work/$tool.err" && echo 0 >"$work/$tool.rc" || echo $? >"$work/$tool.rc"
}

heapkit_leaks() {  # "bytes objects" of the program's own report (0 0 if clean)
  cat "$work"/hk.* 2>/dev/null | sed -n -E 's/^Leak check _main_ detected leaks of ([0-9]+) bytes in ([0-9]+) objects.*/\1 \2/p' | head -1 | grep . || echo "0 0"
}
valgrind_leaks() {
  awk '/definitely lost:/ {gsub(",", ""); d=$4; db=$7} /indirectly lost:/ {gsub(",", ""); i=$4; ib=$7}
       END {printf "%d %d\n", d + i, db + ib}' "$work/vg.log"
}
lsan_leaks() {
  cat "$work"/lsan.* 2>/dev/null | sed -n -E 's/^SUMMARY: LeakSanitizer: ([0-9]+) byte\(s\) leaked in ([0-9]+) allocation\(s\).*/\1 \2/p' | head -1 | grep . || echo "0 0"
}

if [[ $what == check ]]; then
  for p in "${programs[@]}"; do
    name=${p%%|*} cmd=${p#*|}
    [[ $name == "$only" ]] || continue
    [[ $name == tar-list ]] && run_tool plain tar-create "tar -cf out.tar -C /usr/include/linux ."
    command -v "${cmd%% *}" >/dev/null || { echo "SKIP: ${cmd%% *} not installed"; exit 77; }
    run_tool plain "$name" "$cmd"
    run_tool heapkit "$name" "$cmd"
    fail=0
    if [[ $(cat "$work/heapkit.rc") -gt 128 ]]; then echo "FAIL: killed by a signal"; fail=1; fi
    if [[ $(cat "$work/heapkit.rc") != $(cat "$work/plain.rc") ]]; then
      echo "FAIL: exit $(cat "$work/heapkit.rc"), plain $(cat "$work/plain.rc")"; fail=1; fi
    if ! cmp -s "$work/plain.out" "$work/heapkit.out"; then echo "FAIL: stdout differs"; fail=1; fi
    if ! cmp -s "$work/plain.err" "$work/heapkit.err"; then
      echo "FAIL: stderr differs:"; head -5 "$work/heapkit.err"; fail=1; fi
    for r in "$work"/hk.*; do
      [[ -e $r ]] || continue
      grep -qE '^(Leak check _main_ detected leaks of [0-9]+ bytes|No leaks found)' "$r" ||
        { echo "FAIL: malformed report $r"; head -3 "$r"; fail=1; }
    done
    read -r b o < <(heapkit_leaks)
    echo "RESULT: $name: $b bytes in $o objects, $(wall "$work/heapkit.time") s (plain $(wall "$work/plain.time") s)"
    exit $fail
  done
  echo "FAIL: no program $only"; exit 2
fi

echo "| program | command | plain s | heapkit bytes / objects | s | valgrind bytes / blocks | s | LSan bytes / allocations | s | heapkit = valgrind |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for p in "${programs[@]}"; do
  name=${p%%|*} cmd=${p#*|}
  command -v "${cmd%% *}" >/dev/null || continue
  [[ $name == tar-list ]] && run_tool plain tar-create "tar -cf out.tar -C /usr/include/linux ."
  run_tool plain "$name" "$cmd"; tp=$(wall "$work/plain.time")
  run_tool heapkit "$name" "$cmd"; th=$(wall "$work/heapkit.time"); read -r hb ho < <(heapkit_leaks)
  run_tool valgrind "$name" "$cmd"; tv=$(wall "$work/valgrind.time"); read -r vb vo < <(valgrind_leaks)
  run_tool lsan "$name" "$cmd"; tl=$(wall "$work/lsan.time"); read -r lb lo < <(lsan_leaks)
  agree=no; [[ $hb == "$vb" ]] && agree=yes
  printf '| %s | `%s` | %s | %s / %s | %s | %s / %s | %s | %s / %s | %s | %s |\n' "$name" \
    "$(echo "$cmd" | sed "s|$src|<src>|; s/|/\\\\|/g" | cut -c1-70)" "$tp" "$hb" "$ho" "$th" "$vb" "$vo" "$tv" "$lb" "$lo" "$tl" "$agree"
done
