#!/usr/bin/env bash
# run_ctest.sh on a tiny ctest project: two tests skip (one says why, one says nothing), one
# passes. The end of the log must name both skipped tests, the first with its SKIP line's reason.
# Usage: skip_reasons_check.sh <work dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
rm -rf "$work" && mkdir -p "$work/src"
cat > "$work/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(skips NONE)
enable_testing()
add_test(NAME widget.skip COMMAND sh -c "echo probing; echo 'SKIP: no widget here'; exit 77")
add_test(NAME quiet.skip COMMAND sh -c "exit 77")
add_test(NAME fine COMMAND sh -c "echo fine")
set_tests_properties(widget.skip quiet.skip PROPERTIES SKIP_RETURN_CODE 77)
CMAKE
cmake -S "$work/src" -B "$work/build" >/dev/null
cd "$work/build"
out=$("$here/run_ctest.sh" -j2)
tail=$(printf '%s\n' "$out" | tail -n 3)
want="Skipped tests and why (2):
  widget.skip: no widget here
  quiet.skip: (no output)"
if [[ $tail != "$want" ]]; then
  printf 'FAIL: the log ends with\n%s\nwant\n%s\n' "$tail" "$want"
  exit 1
fi
echo "PASS: the skipped tests' reasons end the log"
