#!/usr/bin/env bash
# Privileged (AT_SECURE) processes ignore heapkit's environment. Usage:
#   run_privileged.sh <privileged_victim> <workdir>
# Runs the statically linked victim with HEAPCHECK, HEAPPROFILE, dump directory, suppressions
# and large-allocation variables set: first as a plain program (each variable must act: the
# control), then as a setgid copy run by root, which the kernel starts with AT_SECURE set
# (egid != gid): nothing may be checked, dumped, read or printed.
set -u
victim=$1
work=$2
rm -rf "$work" && mkdir -p "$work/plain" "$work/secure"
fail() { echo "FAIL: $*"; exit 1; }

secret="$work/root-only.supp"
printf 'not a suppression line\n' >"$secret"
chmod 0600 "$secret"

run() {  # run <dir> <binary>: the victim with every variable pointing into <dir>
  local dir=$1 bin=$2
  env HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$dir" HEAPCHECK_SUPPRESSIONS="$secret" \
      HEAPPROFILE="$dir/prof" HEAP_PROFILE_ALLOCATION_INTERVAL=8m HEAP_PROFILE_FORMAT=both \
      TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD=1m PERFTOOLS_VERBOSE=1 HEAPKIT_HTTP=127.0.0.1:0 \
      "$bin" >"$dir/out" 2>"$dir/err"
  echo $?
}

# Control: the same program and environment, unprivileged.
status=$(run "$work/plain" "$victim")
grep -q '^AT_SECURE=0$' "$work/plain/out" || fail "plain run: $(cat "$work/plain/out")"
[[ $status == 1 ]] || fail "plain run exited $status, expected 1 (leak found)"
grep -q 'Leak check _main_ detected leaks of 33 bytes in 1 objects' "$work/plain/err" \
  || fail "plain run: no leak report"
grep -q 'tcmalloc: large alloc' "$work/plain/err" || fail "plain run: no large-alloc report"
grep -q 'HEAPCHECK_SUPPRESSIONS' "$work/plain/err" || fail "plain run: suppressions file not read"
ls "$work/plain"/prof.*.heap >/dev/null 2>&1 || fail "plain run: no heap-profile dumps"
ls "$work/plain"/prof.*.heap.pb.gz >/dev/null 2>&1 || fail "plain run: no profile.proto dumps"
ls "$work/plain"/*-end.heap >/dev/null 2>&1 || fail "plain run: no leak-check .heap file"
grep -q 'HTTP endpoint listening on 127.0.0.1:' "$work/plain/err" || fail "plain run: no HTTP endpoint"

# Privileged: a setgid copy. The group must differ from root's for the kernel to set AT_SECURE.
cp "$victim" "$work/victim-setgid"
chgrp nogroup "$work/victim-setgid" 2>/dev/null || chgrp 65534 "$work/victim-setgid" \
  || { echo "SKIP: cannot change the copy's group (not root?)"; exit 77; }
chmod 2755 "$work/victim-setgid"
status=$(run "$work/secure" "$work/victim-setgid")
if grep -q '^AT_SECURE=0$' "$work/secure/out"; then
  echo "SKIP: the kernel did not set AT_SECURE for a setgid program here (nosuid mount?)"
  exit 77
fi
grep -q '^AT_SECURE=1$' "$work/secure/out" || fail "secure run: $(cat "$work/secure/out")"
[[ $status == 0 ]] || fail "secure run exited $status: the leak checker ran ($(head -3 "$work/secure/err"))"
[[ ! -s "$work/secure/err" ]] || fail "secure run printed: $(head -5 "$work/secure/err")"
leftovers=$(find "$work/secure" -name '*.heap' -o -name '*.pb.gz' | head -3)
[[ -z $leftovers ]] || fail "secure run wrote $leftovers"
echo "PASS: a setgid (AT_SECURE) run ignores HEAPCHECK, HEAPPROFILE, HEAPCHECK_SUPPRESSIONS, HEAPKIT_HTTP and TCMALLOC_*"
