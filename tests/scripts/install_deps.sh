#!/usr/bin/env bash
# Installs heapkit's dependencies from Debian 12's packages, only if missing.
# Usage: tests/scripts/install_deps.sh [--demo | --peers]
#   (none)   what the build and the whole test suite need (the README's test command)
#   --demo   only what building heapkit without its tests and running the demo need
#   --peers  the test set plus the allocators/profilers the benchmarks compare against
set -euo pipefail
# libdw loads elfutils' debuginfod client (libdebuginfod1) itself, when it is installed, to fetch
# missing debug info when DEBUGINFOD_URLS is set; the test set installs it with the server.
build_pkgs=(build-essential cmake ninja-build pkg-config libunwind-dev libdw-dev libelf-dev
            libgraphviz-dev graphviz libcli11-dev libcpp-httplib-dev
            libre2-dev
            libprotobuf-dev protobuf-compiler zlib1g-dev golang-github-google-pprof-dev
            # <sys/sdt.h>: the allocator's otel_memory USDT probes (built without them if absent)
            systemtap-sdt-dev)
# The test suite's own build dependencies.
test_build_pkgs=(libgtest-dev libbenchmark-dev
  # the leak checker's TLS-teardown pattern program (tests/heapcheck/patterns) links these
  libcurl4-openssl-dev
  libssl-dev
)
# Oracles used by the test suite (google-pprof, go tool pprof), real programs it runs, and the
# peer allocators the benchmark smoke run loads.
test_pkgs=(google-perftools libgoogle-perftools-dev golang-go python3 perl git sqlite3 valgrind
           clang chromium libpython3.11-testsuite python3-protobuf libjemalloc2 libmimalloc2.0
           debuginfod
           # the leak checker's ptrace fallback runs a program under strace -f (tests/heapcheck)
           strace
           # a real Prometheus server scrapes HEAPKIT_HTTP's /metrics (tests/profiler/http)
           prometheus
           # a real service the endpoint's memory is measured in (tests/bench/profiler)
           memcached
           # a real USDT consumer reads the otel_memory probes' arguments (tests/alloc/usdt)
           gdb
           # tests/scripts/format.sh and scripts.format_check: the sources' layout (.clang-format)
           clang-format-14
           # processes that leave through _exit, and a parser generator, under both
           # interior-pointer rules (tests/real_world/interior_rule_table.sh)
           rsync lemon)
peer_pkgs=(libjemalloc-dev libmimalloc-dev heaptrack)
case "${1:-}" in
  --demo) want=("${build_pkgs[@]}") ;;
  --peers) want=("${build_pkgs[@]}" "${test_build_pkgs[@]}" "${test_pkgs[@]}" "${peer_pkgs[@]}") ;;
  *) want=("${build_pkgs[@]}" "${test_build_pkgs[@]}" "${test_pkgs[@]}") ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then exit 0; fi

echo "heapkit: installing missing packages: ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "heapkit: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# libgvc needs its plugin configuration; Debian's graphviz postinst writes it, but check.
if ! ls /usr/lib/x86_64-linux-gnu/graphviz/config* >/dev/null 2>&1; then "${sudo[@]}" dot -c; fi
