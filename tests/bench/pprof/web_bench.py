#!/usr/bin/env python3
"""pprof-tool --http on the 12,000-stack benchmark profile: time to first page and per view.

Builds the generated program and profile as run.sh does (WORK dir, reused when present), then
RUNS times: starts `pprof-tool --http=127.0.0.1:0 --no_browser --keep_allocator_frames bigprog
big.heap`, measures from the start of the process until GET /ui/top?si=alloc_space has answered (load + symbolize +
first page), then fetches each view twice: the first answer is the view's own work (symbols
cached, the answer not yet kept), the second is the same request again (the web UI keeps its
last answers). Stops the server with SIGTERM. Prints medians.
Usage: tests/bench/pprof/web_bench.py <build dir> [pprof-tool binary]
       (env: WORK, RUNS=5, STACKS=12000)
"""
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1]
pprof = sys.argv[2] if len(sys.argv) > 2 else os.path.join(build, "pprof-tool", "pprof-tool")
work = os.environ.get("WORK", "/tmp/heapkit-pprof-bench")
runs = int(os.environ.get("RUNS", "5"))
stacks = os.environ.get("STACKS", "12000")
os.makedirs(work, exist_ok=True)
prog, heap = os.path.join(work, "bigprog"), os.path.join(work, "big.heap")
if not os.access(prog, os.X_OK):
    subprocess.run([sys.executable, os.path.join(here, "gen_program.py"), os.path.join(work, "src"),
                    "40", "100"], check=True)
    src = os.path.join(work, "src")
    objs = []
    for f in sorted(os.listdir(src)):
        if f.endswith(".cc"):
            subprocess.run(["g++", "-O2", "-g", "-fno-pie", "-c", os.path.join(src, f), "-o",
                            os.path.join(src, f + ".o")], check=True)
            objs.append(os.path.join(src, f + ".o"))
    subprocess.run(["g++", "-no-pie", "-o", prog] + objs, check=True)
if not os.path.exists(heap):
    subprocess.run([sys.executable, os.path.join(here, "gen_profile.py"), prog, stacks, heap],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def fetch(port, view):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, view), timeout=120) as r:
        assert r.status == 200, view
        r.read()


first_page = "/ui/top?si=alloc_space"  # the same work as /ui/top, but not one of the views
# The web UI keeps the pipeline's last samples: /ui/flamegraph.svg right after /ui/top (same
# query) measures the picture alone, as after its page; ?si=inuse_objects is a query not asked
# before, so that line (and /ui/ after it) includes the pipeline.
views = ["/ui/top", "/ui/flamegraph.svg", "/ui/flamegraph.svg?si=inuse_objects", "/ui/",
         "/ui/peek?f=leaf_210%24", "/ui/source?f=leaf_210%24"]
first, cold, again = [], {v: [] for v in views}, {v: [] for v in views}
for _ in range(runs):
    t0 = time.monotonic()
    # The generated gen::leaf_N, reached from many callers, are allocation wrappers to the
    # default views (charged to their callers): keep them, so that peek and source have them.
    server = subprocess.Popen([pprof, "--http=127.0.0.1:0", "--no_browser",
                               "--keep_allocator_frames", prog, heap],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        port = int(server.stdout.readline().decode().rsplit(":", 1)[1])
        fetch(port, first_page)
        first.append(time.monotonic() - t0)
        for v in views:  # after the first page: each view's own time, then asked again
            for times in (cold, again):
                t = time.monotonic()
                fetch(port, v)
                times[v].append(time.monotonic() - t)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()

print("| measure (median of %d) | first answer s | asked again s |" % runs)
print("|---|---|---|")
print("| start to first page (%s answered) | %.3f | |" % (first_page, statistics.median(first)))
for v in views:
    print("| %s | %.3f | %.3f |" % (v, statistics.median(cold[v]), statistics.median(again[v])))
