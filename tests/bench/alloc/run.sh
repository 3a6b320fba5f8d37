#!/usr/bin/env bash
# Allocator benchmark driver: runs alloc_bench under LD_PRELOAD of glibc (none), gperftools
# tcmalloc_minimal, jemalloc, mimalloc and heapkit, allocators interleaved (rotated order) within
# each repetition, medians of --reps runs; instructions/pair from callgrind as
# (Ir(2N) - Ir(N)) / N. Writes a markdown table (medians, heapkit / best peer) to --out.
#
#   tests/bench/alloc/run.sh [--reps 3] [--bench build/tests/bench/alloc/alloc_bench]
#       [--heapkit build/libheapkit_minimal.so] [--out tests/bench/alloc/RESULTS.md]
#       [--no-callgrind] [--only REGEX] [--smoke]
# --smoke: tiny sizes, 1 repetition, no callgrind (ctest runs this to prove the workloads run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
reps=3
bench=$build/tests/bench/alloc/alloc_bench
heapkit=$build/libheapkit_minimal.so
out=$here/RESULTS.md
callgrind=1
only=.
smoke=0
cmdline="${HEAPKIT_BUILD_DIR:+HEAPKIT_BUILD_DIR=$HEAPKIT_BUILD_DIR }$0 $*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --heapkit) heapkit=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-callgrind) callgrind=0; shift ;;
    --only) only=$2; shift 2 ;;
    --smoke) smoke=1; reps=1; callgrind=0; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x $bench ]] || { echo "run.sh: benchmark binary $bench not found (build target alloc_bench)" >&2; exit 1; }

lib=/usr/lib/x86_64-linux-gnu
names=(glibc tcmalloc jemalloc mimalloc)
libs=("" "$lib/libtcmalloc_minimal.so.4" "$lib/libjemalloc.so.2" "$lib/libmimalloc.so.2")
heapkit_note=""
if [[ -f $heapkit ]] && LD_PRELOAD=$heapkit "$bench" pairs 64 1000 >/dev/null 2>&1; then
  names+=(heapkit)
  libs+=("$heapkit")
else
  heapkit_note="heapkit ($heapkit) missing or not working: not measured"
  echo "run.sh: $heapkit_note" >&2
fi
for i in "${!libs[@]}"; do
  [[ -z ${libs[$i]} || -f ${libs[$i]} ]] || { echo "run.sh: ${libs[$i]} missing" >&2; exit 1; }
done

# Rows: id | label | workload args | metric | extra env. Sizes scaled down by --smoke.
if [[ $smoke == 1 ]]; then N=20000; M=20000; OBJ=20000; OBJ1K=2000; ITER=3; MIB=16; THR=20; MS=50; LGEN=4; LOPS=5000
  [[ $only == . ]] && only='^(pairs16|live64|batch256|ttest1s|ttest2|prodcons|larson|churn|large|fp16|fp1000|startup|rel1s|mthread|linesharing|xthread|xthread_rss|larsonx|larsonx_rss|larsonsz)$'
else N=20000000; M=2000000; OBJ=10000000; OBJ1K=1000000; ITER=200; MIB=512; THR=2000; MS=1000; LGEN=100; LOPS=100000; fi
rows=()
for s in 16 64 256; do
  rows+=("pairs$s|malloc+free pairs, $s B, isolated (ns/pair)|pairs $s $N|ns_per_pair|")
  rows+=("live$s|malloc+free pairs, $s B, 1024 live (ns/pair)|live $s $N|ns_per_pair|")
  rows+=("batch$s|malloc+free pairs, $s B, batches of 100 (ns/pair)|batch $s $N|ns_per_pair|")
done
rows+=("ttest1s|t-test1, 2 threads, private bins, <= 64 B (ns/op)|ttest1 2 64 $((M * 2))|ns_per_op|")
rows+=("ttest1l|t-test1, 2 threads, private bins, <= 32 KiB (ns/op)|ttest1 2 32768 $((M / 2))|ns_per_op|")
rows+=("ttest2|t-test2, 2 threads, shared pool, cross-thread frees, <= 64 B (ns/op)|ttest2 2 64 $M|ns_per_op|")
rows+=("mthread|bench-malloc-thread, 2 threads, 1024 slots of 4 B-32 KiB (ns/iteration)|mthread 2 $MS|ns_per_iter|")
rows+=("linesharing|same, objects per 1024 sharing a cache line with another thread's at the end|linesharing 2 $MS|shared_per_1024|")
rows+=("xthread|rptest-like, 2 threads, 8-16000 B blocks freed by the other thread (ns/step)|xthread 2 $M|ns_per_step|")
rows+=("prodcons|producer/consumer, 1+1 threads, 64 B (ns/object)|prodcons 1 64 $M|ns_per_object|")
rows+=("larson|larson, 2 threads x 10 rounds, 16-128 B (ns/op)|larson 2 10 1000 $((M / 10))|ns_per_op|")
# The cross-thread rows' memory: peak RSS of the same processes (one process answers both rows).
rows+=("xthread_rss|rptest-like, max RSS (MiB)|xthread 2 $M|max_rss_mib|")
rows+=("prodcons_rss|producer/consumer, max RSS (MiB)|prodcons 1 64 $M|max_rss_mib|")
rows+=("larson_rss|larson 16-128 B, max RSS (MiB)|larson 2 10 1000 $((M / 10))|max_rss_mib|")
# mimalloc-bench's larson shape: 5000 blocks of 8-1000 B per chain, allocated by the main
# thread; each thread of a chain does 100 000 replacements, starts its successor and exits.
rows+=("larsonx|larson-like, 2 chains x $LGEN threads, 8-1000 B, main-thread warm-up (ns/op)|larsonx 2 $LGEN 5000 $LOPS 8 1000|ns_per_op|")
rows+=("larsonx_rss|same, max RSS (MiB)|larsonx 2 $LGEN 5000 $LOPS 8 1000|max_rss_mib|")
rows+=("larsonsz|same with sized delete (larson-sized) (ns/op)|larsonx 2 $LGEN 5000 $LOPS 8 1000 1|ns_per_op|")
rows+=("larsonsz_rss|same, max RSS (MiB)|larsonx 2 $LGEN 5000 $LOPS 8 1000 1|max_rss_mib|")
rows+=("churn|thread churn, $THR threads exiting holding memory (us/thread)|churn $THR 200|us_per_thread|")
rows+=("large|large blocks 5-25 MiB x $ITER, pages touched (user+sys s)|large $ITER|cpu_seconds|")
for s in 8 16 64 100; do
  rows+=("fp$s|RSS per live object, $((OBJ / 1000000))M x $s B (bytes/object)|footprint $s $OBJ|bytes_per_object|")
  rows+=("fpfree$s|RSS after freeing them, $s B (MiB)|footprint $s $OBJ|rss_after_free_mib|")
done
rows+=("fp1000|RSS per live object, $((OBJ1K / 1000))k x 1000 B (bytes/object)|footprint 1000 $OBJ1K|bytes_per_object|")
rows+=("fpfree1000|RSS after freeing them, 1000 B (MiB)|footprint 1000 $OBJ1K|rss_after_free_mib|")
rows+=("startup|start-up RSS, trivial program (MiB)|startup|rss_mib|")
rows+=("relfree|release: $MIB MiB freed, RSS right after free (MiB)|release $MIB $MS|after_free_mib|")
rows+=("rel1s|release: RSS after 1 s more light activity (MiB)|release $MIB $MS|after_1s_mib|")
rows+=("rel1s_rate10|release at TCMALLOC_RELEASE_RATE=10: RSS after 1 s (MiB)|release $MIB $MS|after_1s_mib|TCMALLOC_RELEASE_RATE=10")
rows+=("relchurn|release: RSS after a further $MIB MiB of 1 MiB malloc/free (MiB)|release $MIB $MS $MIB|after_churn_mib|")
rows+=("relchurn_rate10|same at TCMALLOC_RELEASE_RATE=10 (MiB)|release $MIB $MS $MIB|after_churn_mib|TCMALLOC_RELEASE_RATE=10")
rows+=("relchurn_rate0|same at TCMALLOC_RELEASE_RATE=0 (never release) (MiB)|release $MIB $MS $MIB|after_churn_mib|TCMALLOC_RELEASE_RATE=0")

raw=$(mktemp /tmp/heapkit-bench.XXXXXX)
trap 'rm -f "$raw" "$raw".*' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date -u +%FT%TZ)
declare -A cache  # one process answers several rows (footprint, release)
nalloc=${#names[@]}
for ((rep = 0; rep < reps; rep++)); do
  cache=()
  for row in "${rows[@]}"; do
    IFS='|' read -r id label args metric extra <<<"$row"
    [[ $id =~ $only ]] || continue
    for ((k = 0; k < nalloc; k++)); do
      a=$(((k + rep + ${#id}) % nalloc))  # rotate the order every repetition and row
      key="${names[$a]}|$args|$extra"
      if [[ -z ${cache[$key]:-} ]]; then
        cache[$key]=$(env ${extra:+$extra} LD_PRELOAD="${libs[$a]}" timeout 300 "$bench" $args |
                      tr '\n' ';') || { echo "run.sh: ${names[$a]} $args failed" >&2; cache[$key]="failed"; }
      fi
      value=$(tr ';' '\n' <<<"${cache[$key]}" | awk -v m="$metric" '$1 == m {print $2}')
      echo "$id ${names[$a]} ${value:-nan}" >>"$raw"
    done
  done
  echo "run.sh: repetition $((rep + 1))/$reps done" >&2
done

if [[ $callgrind == 1 ]] && command -v valgrind >/dev/null; then
  CN=300000  # a multiple of the fast-path workloads' 15 segments of whole batches
  for row in "${rows[@]}"; do
    IFS='|' read -r id label args metric extra <<<"$row"
    [[ $id =~ ^(pairs|live|batch) && $id =~ $only ]] || continue
    read -r w s _ <<<"$args"
    for ((a = 0; a < nalloc; a++)); do
      ir=()
      for n in $CN $((2 * CN)); do
        f="$raw.cg"
        LD_PRELOAD="${libs[$a]}" valgrind --tool=callgrind --callgrind-out-file="$f" \
          "$bench" "$w" "$s" "$n" >/dev/null 2>&1
        ir+=("$(awk '/^(summary|totals):/ {print $2; exit}' "$f")")
        rm -f "$f"
      done
      echo "ir_$id ${names[$a]} $(((ir[1] - ir[0]) / CN)).$(((ir[1] - ir[0]) % CN * 10 / CN))" >>"$raw"
    done
  done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, \
$(free -g | awk '/Mem:/ {print $2}') GiB RAM, Linux $(uname -r), $(getconf GNU_LIBC_VERSION)"
versions=$(dpkg-query -W -f='${Package} ${Version}; ' libtcmalloc-minimal4 libjemalloc2 libmimalloc2.0 2>/dev/null || true)
rev=$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=""
[[ -n $(cd "$root" && git status --porcelain 2>/dev/null) ]] && dirty=" + uncommitted changes"
HEAPKIT_NOTE=$heapkit_note RAW=$raw OUT=$out CMDLINE=$cmdline MACHINE=$machine VERSIONS=$versions \
REV="$rev$dirty" START=$start LOAD="$load_before -> $load_after" REPS=$reps NAMES="${names[*]}" \
ROWS="$(printf '%s\n' "${rows[@]}")" /usr/bin/python3 - <<'PY'
import os, statistics, collections
raw = collections.defaultdict(list)
for line in open(os.environ["RAW"]):
    rid, alloc, val = line.split()
    try:
        raw[(rid, alloc)].append(float(val))
    except ValueError:
        pass
names = os.environ["NAMES"].split()
peers = [n for n in names if n != "heapkit"]
rows = []
for line in os.environ["ROWS"].splitlines():
    rid, label, args, metric, extra = (line.split("|") + [""])[:5]
    rows.append((rid, label))
fast = [(("ir_" + rid), label.replace("(ns/pair)", "(instructions/pair, callgrind)"))
        for rid, label in rows if rid.startswith(("pairs", "live", "batch"))]
def fmt(v):
    if v is None: return "—"
    if v >= 100: return f"{v:.0f}"
    if v >= 10: return f"{v:.1f}"
    return f"{v:.2f}"
out = []
out.append("# Allocator benchmarks\n")
out.append("Generated by `tests/bench/alloc/run.sh` (see README.md there). Lower is better in every "
           "row. Medians of %s repetitions; allocators interleaved (rotated order) within each "
           "repetition; instruction counts are exact (callgrind, (Ir(2N) - Ir(N)) / N, N = 300000)."
           % os.environ["REPS"])
out.append("")
out.append("- command: `%s`" % os.environ["CMDLINE"].strip())
out.append("- started: %s; load average before -> after: %s" % (os.environ["START"], os.environ["LOAD"]))
out.append("- machine: %s" % os.environ["MACHINE"])
out.append("- peers: %s" % os.environ["VERSIONS"].strip())
out.append("- heapkit: %s" % os.environ["REV"])
if os.environ.get("HEAPKIT_NOTE"):
    out.append("- **%s**" % os.environ["HEAPKIT_NOTE"])
out.append("")
head = "| row | " + " | ".join(names) + " | best peer | heapkit / best peer |"
out.append(head)
out.append("|" + "---|" * (len(names) + 3))
for rid, label in rows + fast:
    med = {n: (statistics.median(raw[(rid, n)]) if raw.get((rid, n)) else None) for n in names}
    if all(v is None for v in med.values()):
        continue
    pv = {n: med[n] for n in peers if med[n] is not None}
    best = min(pv, key=pv.get) if pv else None
    ratio = "—"
    if best and med.get("heapkit") is not None and pv[best] > 0:
        ratio = "%.2f" % (med["heapkit"] / pv[best])
    out.append("| %s | %s | %s | %s |" % (label, " | ".join(fmt(med[n]) for n in names),
                                         best or "—", ratio))
if int(os.environ["REPS"]) >= 2:
    out.append("")
    out.append("Spread (min–max over repetitions):")
    out.append("")
    out.append("| row | " + " | ".join(names) + " |")
    out.append("|" + "---|" * (len(names) + 1))
    for rid, label in rows:
        vals = [raw.get((rid, n), []) for n in names]
        if not any(vals):
            continue
        out.append("| %s | %s |" % (rid, " | ".join(
            "%s–%s" % (fmt(min(v)), fmt(max(v))) if v else "—" for v in vals)))
open(os.environ["OUT"], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
