#!/usr/bin/env python3
"""What symbolized /debug/pprof/heap fetches leave in the service, and what they cost it.

  http_fetch_memory.py BUILD_DIR PROGRAM

PROGRAM runs with LD_PRELOAD=BUILD_DIR/libheapkit.so and HEAPKIT_HTTP (the HTTP test workload,
tests/profiler/http/http_workload.cc, or a stripped copy of it). Prints RSS (smaps_rollup) and
heapkit_heap_inuse_bytes before, after the first and after the 100th fetch (each read 1.5 s
after the last fetch: the symbolizer is dropped after an idle second), then the server thread's
CPU per fetch back to back and one every 1.5 s (each of those builds the symbolizer again).
"""
import os
import re
import subprocess
import sys
import time
import urllib.request

build, program = sys.argv[1], sys.argv[2]
env = dict(os.environ, HEAPKIT_HTTP="127.0.0.1:0", LD_PRELOAD=os.path.join(build, "libheapkit.so"))
env.pop("TCMALLOC_SAMPLE_PARAMETER", None)
p = subprocess.Popen([program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, env=env)
url = "http://" + re.search(r"listening on (\S+)", p.stderr.readline().decode()).group(1)
assert p.stdout.readline() == b"ready\n"


def get(path):
    with urllib.request.urlopen(url + path, timeout=60) as r:
        return r.read()


def rss_mib():
    with open("/proc/%d/smaps_rollup" % p.pid) as f:
        return int(re.search(r"^Rss:\s+(\d+) kB", f.read(), re.M).group(1)) / 1024


def inuse_mib():
    m = re.search(rb"^heapkit_heap_inuse_bytes (\S+)$", get("/metrics"), re.M)
    return float(m.group(1)) / 2**20


def settled(tag):
    time.sleep(1.5)
    rss = rss_mib()
    print("%-10s RSS %7.2f MiB  heapkit_heap_inuse_bytes %7.2f MiB" % (tag, rss, inuse_mib()))


tid = next(t for t in os.listdir("/proc/%d/task" % p.pid)
           if open("/proc/%d/task/%s/comm" % (p.pid, t)).read().strip() == "heapkit-http")


def cpu_ms():
    with open("/proc/%d/task/%s/schedstat" % (p.pid, tid)) as f:
        return int(f.read().split()[0]) / 1e6


get("/metrics")
settled("before")
get("/debug/pprof/heap")
settled("after 1")
for _ in range(99):
    get("/debug/pprof/heap")
settled("after 100")
for label, gap in (("back to back", 0), ("every 1.5 s", 1.5)):
    costs = []
    for _ in range(10):
        time.sleep(gap)
        before = cpu_ms()
        get("/debug/pprof/heap")
        costs.append(cpu_ms() - before)
    costs.sort()
    print("server thread CPU per fetch, %s: median %.1f ms, max %.1f ms" % (label, costs[5],
                                                                           costs[-1]))
p.communicate(b"", timeout=60)
