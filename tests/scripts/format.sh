#!/usr/bin/env bash
# Formats the project's own C and C++ sources with clang-format 14 and the root .clang-format.
# Usage: tests/scripts/format.sh [--check] [FILE...]
#   (none)    rewrites the files that are not formatted, in place, and names them
#   --check   changes nothing; names the files that are not formatted and exits 1 if any is
#   FILE...   only these files (default: every tracked *.c, *.cc, *.h of the components and the
#             tests: alloc/ profiler/ heapcheck/ pprof-tool/ tests/)
# What must keep its layout says so itself, so that an editor running clang-format agrees with
# this script: a folder's own .clang-format with `DisableFormat: true` (test programs whose line
# numbers and text the golden outputs pin), or `// clang-format off` … `// clang-format on`
# around a table that must stay aligned. clang-format honours both; this script lists nothing
# by hand. Only clang-format 14 (Debian 12's) is accepted: other versions format differently.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=0
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
if [[ "${1:-}" == -* ]]; then echo "usage: $0 [--check] [FILE...]" >&2; exit 2; fi

cf=${CLANG_FORMAT:-}
if [[ -z "$cf" ]]; then
  for c in clang-format-14 clang-format; do command -v "$c" >/dev/null && { cf=$c; break; }; done
fi
if [[ -z "$cf" ]] || ! command -v "$cf" >/dev/null; then
  # --check is the test scripts.format_check: a missing tool skips it (exit 77, tests/README.md).
  if ((check)); then
    echo "SKIP: clang-format 14 is not installed (apt-get install clang-format-14)"
    exit 77
  fi
  echo "format.sh: clang-format 14 is not installed (Debian: apt-get install clang-format-14)" >&2
  exit 2
fi
version=$("$cf" --version)
if [[ ! "$version" =~ version\ 14\. ]]; then
  echo "format.sh: $cf is not clang-format 14 ($version); set CLANG_FORMAT=clang-format-14" >&2
  exit 2
fi

if (($# > 0)); then
  mapfile -t files < <(realpath -ms -- "$@")  # named from the caller's directory
  cd "$root"
elif cd "$root" && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'alloc/*.'{c,cc,h} 'profiler/*.'{c,cc,h} \
    'heapcheck/*.'{c,cc,h} 'pprof-tool/*.'{c,cc,h} 'tests/*.'{c,cc,h} |
    while IFS= read -r f; do [[ -f "$f" ]] && printf '%s\n' "$f"; done)  # not the deleted ones
else  # a source tarball: the same folders, without build directories
  mapfile -t files < <(find alloc profiler heapcheck pprof-tool tests -type d -name 'build*' \
    -prune -o -type f \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) -print | sort)
fi

if ((${#files[@]} == 0)); then echo "format.sh: no C or C++ sources found under $root" >&2; exit 2; fi

# One clang-format run over all of them, without writing: -Werror turns every place that
# would change into a "FILE:LINE:COL: error: code should be clang-formatted" line followed by
# the source line and a caret (once per file with --ferror-limit=1); anything else it prints is
# a real failure (a missing file, a bad .clang-format).
out=$("$cf" --style=file --dry-run -Werror --ferror-limit=1 "${files[@]}" 2>&1) || true
violation='^(.+):[0-9]+:[0-9]+: error: code should be clang-formatted'
changed=() other=() quoted=0
while IFS= read -r line; do
  if ((quoted > 0)); then quoted=$((quoted - 1))  # the source line and the caret under it
  elif [[ "$line" =~ $violation ]]; then changed+=("${BASH_REMATCH[1]}") quoted=2
  elif [[ -n "$line" ]]; then other+=("$line"); fi
done <<<"$out"
if ((${#other[@]} > 0)); then
  printf 'format.sh: clang-format failed: %s\n' "${other[0]}" >&2
  exit 2
fi
mapfile -t changed < <(printf '%s\n' "${changed[@]+"${changed[@]}"}" | sed '/^$/d' | sort -u)
if ((!check && ${#changed[@]} > 0)); then "$cf" --style=file -i "${changed[@]}"; fi

if ((check)); then
  if ((${#changed[@]} == 0)); then
    echo "format.sh: all ${#files[@]} files are formatted"
    exit 0
  fi
  printf '%s\n' "${changed[@]}"
  echo "format.sh: ${#changed[@]} of ${#files[@]} files are not formatted;" \
       "run: bash tests/scripts/format.sh" >&2
  exit 1
fi
printf '%s\n' "${changed[@]+"${changed[@]}"}"
echo "format.sh: formatted ${#changed[@]} of ${#files[@]} files"
