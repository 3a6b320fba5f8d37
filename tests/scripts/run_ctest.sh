#!/usr/bin/env bash
# Runs ctest in the current build directory with the given arguments, then prints, at the end
# of the log, why each skipped test was skipped: its "SKIP: ..." line (tests that cannot have
# their tool exit 77 after printing one). The exit status is ctest's.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
python3 "$(dirname "$0")/skip_reasons.py" "$log" Testing/Temporary/LastTest.log
exit "$status"
