#!/usr/bin/env bash
# The shipped runtime libraries reference libc alone, in every build type (README.md "Runtime
# rules"): each undefined symbol of libheapkit.so / libheapkit_minimal.so is a versioned glibc
# symbol or one of the C++ runtime symbols that alloc/internal/cxx_runtime_weak.h makes weak
# (and is then weak); each C++ runtime symbol the minimal archive's members leave undefined is
# weak too. At -O0 the compiler calls what it inlines at -O2 (std::allocator<char>'s destructor,
# std::exception's vtable from std::bad_alloc's constructor), so a reference that the
# optimised builds never see shows up here in the Debug build first.
# Usage: check_runtime_symbols.sh <cxx_runtime_weak.h> <libheapkit_minimal.a> <shared lib>...
set -euo pipefail
header=$1 archive=$2
shift 2
fail=0
# The weak list: the names in the header's `.weak NAME` lines.
allowed=$(sed -n 's/^ *"\.weak \([^\\]*\)\\n".*/\1/p' "$header" | sort -u)
[[ $(wc -l <<<"$allowed") -ge 10 ]] || { echo "FAIL: no .weak list read from $header"; exit 1; }
# The C start files' (crtbeginS.o) own weak references, resolved by nothing in a plain process.
allowed+=$'\n'"_ITM_deregisterTMCloneTable"$'\n'"_ITM_registerTMCloneTable"$'\n'"__gmon_start__"
is_allowed() { grep -qxF "$1" <<<"$allowed"; }
libc=$(ldd "$1" 2>/dev/null | awk '$1 == "libc.so.6" {print $3}')
[[ -n $libc ]] || libc=/lib/x86_64-linux-gnu/libc.so.6
libc_defines=$(nm -D --defined-only "$libc" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
# A C++ runtime name (libstdc++, libsupc++, the unwinder) that libc does not define
# (__cxa_atexit, __cxa_finalize, ... are libc's).
cxx_runtime() {
  [[ $1 =~ ^(_Z|__cxa_|__gxx_|_Unwind_|__dynamic_cast) ]] && ! grep -qxF "$1" <<<"$libc_defines"
}

for lib in "$@"; do
  name=$(basename "$lib")
  # nm -D --undefined-only: "U name@VERSION" (strong) or "w name" (weak).
  while read -r kind sym; do
    base=${sym%%@*}
    if [[ $sym == *@GLIBC_* ]]; then continue; fi
    if ! is_allowed "$base"; then
      echo "FAIL: $name references $(c++filt "$base") ($base), neither glibc nor in $(basename "$header")"
      fail=1
    elif [[ $kind != w ]]; then
      echo "FAIL: $name references $(c++filt "$base") strongly; the header makes it weak"
      fail=1
    fi
  done < <(nm -D --undefined-only "$lib" | awk '{print $(NF-1), $NF}')
  echo "checked $name: $(nm -D --undefined-only "$lib" | wc -l) undefined symbols"
done

# The archive: symbols left undefined by its members and defined by none of them.
defined=$(nm --defined-only "$archive" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u)
while read -r kind sym; do
  cxx_runtime "$sym" || continue
  grep -qxF "$sym" <<<"$defined" && continue
  if [[ $kind != w ]]; then
    echo "FAIL: $(basename "$archive") references $(c++filt "$sym") ($sym) strongly"
    fail=1
  fi
done < <(nm --undefined-only "$archive" 2>/dev/null | awk 'NF == 2 {print $1, $2}' | sort -u)
[[ $fail == 0 ]] || exit 1
echo "ok: the runtime libraries reference libc and the weak C++ runtime list only"
