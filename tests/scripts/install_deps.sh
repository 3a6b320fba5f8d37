#!/usr/bin/env bash
# Installs heapkit's build and test dependencies from Debian 12's packages, only if missing.
# Usage: tests/scripts/install_deps.sh [--peers]   (--peers: also the allocators/profilers we
# compare against in tests and benchmarks)
set -euo pipefail
build_pkgs=(build-essential cmake ninja-build pkg-config libunwind-dev libdw-dev libelf-dev
            libgraphviz-dev graphviz libcli11-dev libgtest-dev libbenchmark-dev
            libprotobuf-dev protobuf-compiler zlib1g-dev golang-github-google-pprof-dev)
# Oracles used by the test suite (google-pprof, go tool pprof) and real programs it runs.
test_pkgs=(google-perftools libgoogle-perftools-dev golang-go python3 perl git sqlite3 valgrind
           clang chromium libpython3.11-testsuite python3-protobuf libjemalloc2)
peer_pkgs=(libjemalloc-dev libmimalloc-dev heaptrack)
want=("${build_pkgs[@]}" "${test_pkgs[@]}")
if [[ "${1:-}" == "--peers" ]]; then want+=("${peer_pkgs[@]}"); fi

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
