#!/usr/bin/env bash
# The malloc+free fast path against the peers: cycles, CPU ns and wall ns per pair for four
# shapes of one size — free(malloc(n)) while 1,024 objects of the size stay live, the same with
# no live set (immediate free), batches of 100, one of 1,024 live objects replaced per step —
# under heapkit, mimalloc, gperftools tcmalloc and jemalloc, interleaved (every repetition runs
# every shape under every allocator, in an order rotated per repetition and shape), and
# callgrind's instructions per pair beside them. Prints markdown tables (medians and min–max
# over the repetitions, and each column's cycles over heapkit's in the same repetition) and
# writes them to --out.
#
#   tests/bench/alloc/fastpath.sh [--reps 9] [--size 32] [--n 30000000] [--no-callgrind]
#       [--heapkit build/libheapkit_minimal.so] [--lib name=lib.so ...] [--out FILE]
#
# --lib adds a column (e.g. an older heapkit build for a before/after pair). The figures per
# process are alloc_bench's pairs/live/batch lines (bench_fastpath.cc): cycles from the CPU's
# counter where perf_event_open gives one, else CPU time × the core clock measured by a
# dependent-add chain in the same process; CPU time is the thread's own, so a shared machine's
# waits are not in it (its cache pollution is). The load average is sampled at every repetition
# and printed with the tables. Instructions: (Ir(2N) − Ir(N)) / N under callgrind, N = 300 000
# (exact, independent of load: set-up and warm-up cancel; the loop itself is in the figure).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
reps=9
size=32
n=30000000
bench=$build/tests/bench/alloc/alloc_bench
heapkit=$build/libheapkit_minimal.so
out=""
callgrind=1
extra=()
cmdline="${HEAPKIT_BUILD_DIR:+HEAPKIT_BUILD_DIR=$HEAPKIT_BUILD_DIR }$0 $*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --heapkit) heapkit=$2; shift 2 ;;
    --lib) extra+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-callgrind) callgrind=0; shift ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
done
[[ -x $bench ]] || { echo "fastpath.sh: $bench not found (build target alloc_bench)" >&2; exit 1; }
lib=/usr/lib/x86_64-linux-gnu
names=(heapkit mimalloc tcmalloc jemalloc)
libs=("$heapkit" "$lib/libmimalloc.so.2" "$lib/libtcmalloc_minimal.so.4" "$lib/libjemalloc.so.2")
for e in "${extra[@]}"; do names+=("${e%%=*}"); libs+=("${e#*=}"); done
for l in "${libs[@]}"; do [[ -f $l ]] || { echo "fastpath.sh: $l not found" >&2; exit 1; }; done
# id | alloc_bench arguments before/after the size and count
shapes=("held|pairs|1024" "pairs|pairs|" "batch|batch|" "replace|live|")

raw=$(mktemp /tmp/heapkit-fastpath.XXXXXX)
trap 'rm -f "$raw" "$raw".*' EXIT
start=$(date -u +%FT%TZ)
loads=()
nalloc=${#names[@]}
for ((rep = 0; rep < reps; rep++)); do
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  for ((si = 0; si < ${#shapes[@]}; si++)); do
    IFS='|' read -r id workload more <<<"${shapes[$si]}"
    for ((k = 0; k < nalloc; k++)); do
      a=$(((k + rep + si) % nalloc))  # rotate the order every repetition and shape
      # shellcheck disable=SC2086  # $more is empty or one number
      LD_PRELOAD=${libs[$a]} "$bench" "$workload" "$size" "$n" $more |
        awk -v s="$id" -v a="${names[$a]}" -v r="$rep" '{print s, a, $1, $2, r}' >>"$raw"
    done
  done
  echo "fastpath.sh: repetition $((rep + 1))/$reps done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
loads+=("$(cut -d' ' -f1 /proc/loadavg)")

if [[ $callgrind == 1 ]] && command -v valgrind >/dev/null; then
  CN=300000  # a multiple of the workload's 15 segments of whole batches: every pair is counted
  for sh in "${shapes[@]}"; do
    IFS='|' read -r id workload more <<<"$sh"
    for ((a = 0; a < nalloc; a++)); do
      ir=()
      for c in $CN $((2 * CN)); do
        # shellcheck disable=SC2086
        LD_PRELOAD=${libs[$a]} valgrind --tool=callgrind --callgrind-out-file="$raw.cg" \
          "$bench" "$workload" "$size" "$c" $more >/dev/null 2>&1
        ir+=("$(awk '/^(summary|totals):/ {print $2; exit}' "$raw.cg")")
        rm -f "$raw.cg"
      done
      echo "$id ${names[$a]} instructions_per_pair $(awk -v a="${ir[0]}" -v b="${ir[1]}" \
        -v n=$CN 'BEGIN {printf "%.2f", (b - a) / n}')" >>"$raw"
    done
  done
fi

rev=$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n $(cd "$root" && git status --porcelain 2>/dev/null) ]] && rev+=" + uncommitted changes"
RAW=$raw OUT=$out CMDLINE=$cmdline START=$start REPS=$reps SIZE=$size N=$n NAMES="${names[*]}" \
LOADS="${loads[*]}" REV=$rev \
MACHINE="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, Linux $(uname -r), $(getconf GNU_LIBC_VERSION)" \
VERSIONS="$(dpkg-query -W -f='${Package} ${Version}; ' libmimalloc2.0 libtcmalloc-minimal4 libjemalloc2 2>/dev/null || true)" \
  /usr/bin/python3 - <<'PY'
import collections, os, statistics
vals = collections.defaultdict(list)
by_rep = {}
for line in open(os.environ["RAW"]):
    shape, alloc, metric, value, *rep = line.split()
    vals[(shape, alloc, metric)].append(float(value))
    if rep: by_rep[(shape, alloc, metric, rep[0])] = float(value)
names = os.environ["NAMES"].split()
shapes = [("held", "1,024 objects live"), ("pairs", "immediate free"), ("batch", "batches of 100"),
          ("replace", "one of 1,024 live replaced per step")]
def med(s, a, m):
    v = vals.get((s, a, m))
    return statistics.median(v) if v else None
def cell(s, a, m, spread=True):
    v = vals.get((s, a, m))
    if not v: return "—"
    txt = "%.2f" % statistics.median(v) if m != "cycles_per_pair" else "%.1f" % statistics.median(v)
    if spread and len(v) > 1:
        txt += " (%.*f–%.*f)" % ((1, min(v), 1, max(v)) if m == "cycles_per_pair" else (2, min(v), 2, max(v)))
    return txt
def best(s, m):
    m_ = {a: med(s, a, m) for a in names if med(s, a, m) is not None}
    if not m_: return "—"
    b = min(m_, key=m_.get)
    peers = [m_[a] for a in m_ if a != "heapkit" and a in ("mimalloc", "tcmalloc", "jemalloc")]
    ratio = " (heapkit / best peer %.2f)" % (m_["heapkit"] / min(peers)) if "heapkit" in m_ and peers else ""
    return b + ratio
sources = {v for (s, a, m), vs in vals.items() if m == "cycles_source" for v in vs}
how = ("the CPU's cycle counter (perf_event_open)" if sources == {1.0} else
       "CPU time × the core clock measured by a dependent-add chain in the same process "
       "(no hardware counters readable here)" if sources == {0.0} else "mixed sources")
loads = os.environ["LOADS"].split()
o = []
o.append("Command: `%s` (%s pairs of %s B per process, medians of %s interleaved repetitions, "
         "min–max in brackets). Started %s; heapkit %s." % (os.environ["CMDLINE"].strip(), os.environ["N"],
         os.environ["SIZE"], os.environ["REPS"], os.environ["START"], os.environ["REV"]))
o.append("")
o.append("Machine: %s. Peers: %s" % (os.environ["MACHINE"], os.environ["VERSIONS"].strip()))
o.append("Load average (1 min) at each repetition: %s." % " ".join(loads))
o.append("")
for metric, title in (("cycles_per_pair", "Cycles per malloc+free pair (%s)" % how),
                      ("cpu_ns_per_pair", "CPU ns per pair (the thread's own CPU time)"),
                      ("ns_per_pair", "Wall ns per pair (includes waiting for a CPU)"),
                      ("instructions_per_pair", "Instructions per pair (callgrind, (Ir(2N) − Ir(N)) / N, N = 300 000; exact)")):
    if not any((s, a, metric) in vals for s, _ in shapes for a in names): continue
    o.append("%s:" % title)
    o.append("")
    o.append("| row | " + " | ".join(names) + " | lowest |")
    o.append("|---|" + "---|" * (len(names) + 1))
    for s, label in shapes:
        o.append("| %s | %s | %s |" % (label, " | ".join(cell(s, a, metric, metric != "instructions_per_pair") for a in names), best(s, metric)))
    o.append("")
# Paired: each column against heapkit in the same repetition (run minutes apart at most), so
# that a change of the machine's speed between repetitions cancels.
reps = sorted({k[3] for k in by_rep})
if len(reps) > 1:
    o.append("Cycles per pair relative to heapkit's in the same repetition (median of the per-repetition ratios; > 1: heapkit uses fewer):")
    o.append("")
    o.append("| row | " + " | ".join(a for a in names if a != "heapkit") + " |")
    o.append("|---|" + "---|" * (len(names) - 1))
    for s, label in shapes:
        cells = []
        for a in names:
            if a == "heapkit": continue
            r = [by_rep[(s, a, "cycles_per_pair", x)] / by_rep[(s, "heapkit", "cycles_per_pair", x)]
                 for x in reps if (s, a, "cycles_per_pair", x) in by_rep and (s, "heapkit", "cycles_per_pair", x) in by_rep]
            cells.append("%.2f (%.2f–%.2f)" % (statistics.median(r), min(r), max(r)) if r else "—")
        o.append("| %s | %s |" % (label, " | ".join(cells)))
    o.append("")
text = "\n".join(o)
print(text)
if os.environ["OUT"]: open(os.environ["OUT"], "w").write(text + "\n")
PY
