#!/usr/bin/env bash
# Heap-profiler benchmark: runtime of profiler_bench with no profiling vs heapkit HEAPPROFILE at
# the default rate vs heapkit exact mode (TCMALLOC_SAMPLE_PARAMETER=1) vs gperftools'
# HEAPPROFILE (LD_PRELOAD libtcmalloc.so.4), configurations interleaved within each repetition,
# medians of --reps runs (CPU and wall time of the benchmark process, exit dump included). Then the
# per-function accuracy of the default-rate profiles (accuracy.py). Writes markdown to --out.
#
#   tests/bench/profiler/run.sh [--reps 3] [--bench build/tests/bench/profiler/profiler_bench]
#       [--heapkit build/libheapkit.so] [--out tests/bench/profiler/RESULTS.md] [--smoke]
#
# Two workload sizes: "large" (30 M malloc/free pairs + 320 MB retained) measures the overhead
# of default-rate profiling; "small" (1 M pairs + 80 MB retained) is the one gperftools'
# HEAPPROFILE can finish in reasonable time, and compares all configurations.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
reps=3
bench=$build/tests/bench/profiler/profiler_bench
heapkit=$build/libheapkit.so
out=$here/RESULTS.md
smoke=0
cmdline="$0 $*"
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --heapkit) heapkit=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for f in "$bench" "$heapkit"; do
  [[ -e $f ]] || { echo "run.sh: $f not found (build first, or pass --bench/--heapkit)" >&2; exit 2; }
done
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
[[ -e $tcmalloc ]] || tcmalloc=""
large="30000000 4"
small="1000000 1"
if [[ $smoke == 1 ]]; then reps=1; large="20000 0"; small="20000 0"; fi
work=$(mktemp -d /tmp/heapkit-prof-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run <label> <workload args> -- env assignments...
run() {
  local label=$1 args=$2; shift 2
  local dir=$work/$label.$rep
  mkdir -p "$dir"
  # `timeout` runs first and `env` sets the variables only for the benchmark itself, so no
  # helper process is preloaded (it would write its own profile). /usr/bin/time measures the
  # benchmark process: wall seconds and CPU (user + sys) seconds.
  timeout 900 /usr/bin/time -f "%e %U %S" -o "$dir/time" \
    env -u HEAPPROFILE -u TCMALLOC_SAMPLE_PARAMETER -u LD_PRELOAD "$@" "$bench" $args \
    > "$dir/out" 2> "$dir/err" || { echo "run.sh: $label failed" >&2; cat "$dir/err" >&2; exit 1; }
  read -r wall user sys < "$dir/time"
  echo "$label $wall $(echo "$user + $sys" | bc -l)" >> "$work/times"
}

configs_large=(glibc heapkit heapkit_default heapkit_exact)
configs_small=(heapkit heapkit_default heapkit_exact)
[[ -n $tcmalloc ]] && configs_small+=(tcmalloc tcmalloc_heapprofile)

run_config() {  # run_config <size> <config>
  local size=$1 cfg=$2 args
  if [[ $size == large ]]; then args=$large; else args=$small; fi
  local dir=$work/${size}_$cfg.$rep
  case $cfg in
    glibc) run ${size}_$cfg "$args" ;;
    heapkit) run ${size}_$cfg "$args" LD_PRELOAD="$heapkit" ;;
    heapkit_default) run ${size}_$cfg "$args" LD_PRELOAD="$heapkit" HEAPPROFILE="$dir/prof" ;;
    heapkit_exact) run ${size}_$cfg "$args" LD_PRELOAD="$heapkit" HEAPPROFILE="$dir/prof" TCMALLOC_SAMPLE_PARAMETER=1 ;;
    tcmalloc) run ${size}_$cfg "$args" LD_PRELOAD="$tcmalloc" ;;
    tcmalloc_heapprofile) run ${size}_$cfg "$args" LD_PRELOAD="$tcmalloc" HEAPPROFILE="$dir/prof" ;;
  esac
}

for ((rep = 1; rep <= reps; rep++)); do
  # Rotate the order each repetition so slow drifts of the shared machine spread evenly.
  n=${#configs_large[@]}
  for ((i = 0; i < n; i++)); do run_config large "${configs_large[$(((i + rep) % n))]}"; done
  n=${#configs_small[@]}
  for ((i = 0; i < n; i++)); do run_config small "${configs_small[$(((i + rep) % n))]}"; done
done

median() {  # median <label> <column: 2 = wall, 3 = cpu>
  grep "^$1 " "$work/times" | awk -v c="${2:-3}" '{print $c}' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }

{
  echo "# heap-profiler benchmark results"
  echo
  echo "Command: \`$cmdline\`  "
  echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)  "
  echo "Repetitions: $reps. Medians per configuration of the benchmark process's CPU time (user +"
  echo "sys; exit dump included) — the primary figure, since the machine is shared and wall time"
  echo "swings with other load — and of its wall-clock time."
  echo
  echo "## Large workload: \`profiler_bench $large\` (overhead of default-rate profiling)"
  echo
  echo "| configuration | CPU s | wall s | CPU vs heapkit without profiling |"
  echo "|---|---:|---:|---:|"
  base=$(median large_heapkit 3)
  for cfg in "${configs_large[@]}"; do
    m=$(median large_$cfg 3); w=$(median large_$cfg 2); echo "| $cfg | $m | $w | $(ratio "$m" "$base") |"
  done
  echo
  echo "## Small workload: \`profiler_bench $small\` (all configurations, incl. gperftools HEAPPROFILE)"
  echo
  echo "| configuration | CPU s | wall s | CPU vs heapkit without profiling |"
  echo "|---|---:|---:|---:|"
  base=$(median small_heapkit 3)
  for cfg in "${configs_small[@]}"; do
    m=$(median small_$cfg 3); w=$(median small_$cfg 2); echo "| $cfg | $m | $w | $(ratio "$m" "$base") |"
  done
  if [[ -n $tcmalloc ]]; then
    echo
    echo "gperftools HEAPPROFILE / heapkit exact mode (CPU): **$(ratio "$(median small_tcmalloc_heapprofile 3)" "$(median small_heapkit_exact 3)")x**"
  fi
  echo
  echo "## Accuracy of default-rate profiles (large workload, exit dump, per repetition)"
  echo
  echo '```'
  for ((rep = 1; rep <= reps; rep++)); do
    dir=$work/large_heapkit_default.$rep
    f=$(ls "$dir"/prof.*.heap | tail -1)
    echo "repetition $rep: $(basename "$f") $(head -1 "$f")"
    python3 "$here/accuracy.py" "$bench" "$f" "$dir/out"
  done
  echo '```'
} > "$out"
cat "$out"
