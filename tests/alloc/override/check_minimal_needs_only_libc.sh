#!/usr/bin/env bash
# libheapkit_minimal.so depends on libc alone, and a C program that preloads it loads no other
# library (no libstdc++, libm, libgcc_s): start-up of preloaded short processes stays cheap.
# Usage: check_minimal_needs_only_libc.sh <libheapkit_minimal.so> <a C program>
set -euo pipefail
lib=$1 prog=$2
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if [[ $needed != "libc.so.6 " ]]; then
  echo "FAIL: $lib needs: $needed(want libc.so.6 only)"; exit 1
fi
strong=$(nm -D --undefined-only "$lib" | awk '$1 == "U" && $2 !~ /@GLIBC_/ {print $2}' | tr '\n' ' ')
if [[ -n $strong ]]; then
  echo "FAIL: $lib has strong references outside libc: $strong"; exit 1
fi
loaded=$(LD_PRELOAD=$lib LD_DEBUG=libs "$prog" 2>&1 >/dev/null | sed -n 's/.*calling init: //p' |
         xargs -rn1 basename | sort | tr '\n' ' ')
for l in $loaded; do
  case $l in libc.so.6|ld-linux-x86-64.so.2|libheapkit_minimal.so*) ;;
    *) echo "FAIL: preloading $lib into a C program loaded $l"; exit 1 ;;
  esac
done
echo "ok: needs libc.so.6 only; a C program loads: $loaded"
