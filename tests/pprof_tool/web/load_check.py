#!/usr/bin/env python3
"""pprof-tool --http under a bounded load: 2,000 requests over 8 keep-alive connections.

  - profiles user_frames_prog.cc into several dumps and serves them on 127.0.0.1:0;
  - fetches each of 12 views once, one at a time, as the reference answers (more views than the
    web UI keeps answers, so the load mixes kept and recomputed answers);
  - 8 threads, each with its own keep-alive connection (reopened when the server closes it),
    send 250 requests each, cycling through the views from different starting points; every
    answer must be status 200, as long as its Content-Length, and byte-identical to the
    reference (no truncated, mixed or stale body);
  - the server's resident memory after the first 500 requests and at the end differ by less
    than 8 MiB (bounded answer cache; nothing grows per request);
  - the server still answers and SIGTERM ends it with status 0. Killed whatever happens.
Usage: load_check.py <pprof-tool> <libheapkit.so> <program> <work dir>
"""
import http.client
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

pprof, lib, prog, work = sys.argv[1:5]
CONNECTIONS, PER_CONNECTION = 8, 250
VIEWS = ["/ui/", "/ui/top", "/ui/top?si=alloc_space", "/ui/top?si=inuse_objects",
         "/ui/flamegraph", "/ui/flamegraph.svg", "/ui/flamegraph.svg?si=alloc_space",
         "/ui/peek?f=FillVector", "/ui/source?f=FillString", "/ui/timeline",
         "/ui/top?dump=1", "/ui/top?i=FillVector"]
RSS_SLACK = 8 << 20


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fetch(conn, path):
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    length = r.getheader("Content-Length")
    if r.getheader("Connection", "").lower() == "close":
        conn.close()  # the next request opens a new connection
    return r.status, length, body


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, HEAPPROFILE=os.path.join(work, "prof"), LD_PRELOAD=lib,
           HEAP_PROFILE_INUSE_INTERVAL=str(2 << 20), TCMALLOC_SAMPLE_PARAMETER="1")
subprocess.run([prog], env=env, check=True, timeout=60, stderr=subprocess.DEVNULL)
dumps = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".heap"))
if len(dumps) < 3:
    sys.exit("FAIL: the program wrote %d dumps, want several" % len(dumps))

server = subprocess.Popen([pprof, "--no_browser", "--http=127.0.0.1:0", prog] + dumps,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
failures = []
try:
    line = server.stdout.readline().decode()
    prefix = "Serving web UI on http://127.0.0.1:"
    if not line.startswith(prefix):
        sys.exit("FAIL: first line %r, stderr %r" % (line, server.stderr.read().decode()))
    port = int(line[len(prefix):])
    reference = {}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for v in VIEWS:
        status, length, body = fetch(conn, v)
        if status != 200:
            sys.exit("FAIL: %s: status %d: %r" % (v, status, body[:200]))
        reference[v] = body
    conn.close()

    lock = threading.Lock()
    done = [0]
    rss_warm = [None]

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for i in range(PER_CONNECTION):
            v = VIEWS[(k * 5 + i) % len(VIEWS)]
            try:
                status, length, body = fetch(c, v)
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    failures.append("%s: request %d of connection %d: %r" % (v, i, k, e))
                c.close()
                continue
            problem = None
            if status != 200:
                problem = "status %d" % status
            elif length is None or int(length) != len(body):
                problem = "Content-Length %s, body %d bytes" % (length, len(body))
            elif body != reference[v]:
                problem = "body differs from the reference (%d vs %d bytes)" % (
                    len(body), len(reference[v]))
            with lock:
                if problem:
                    failures.append("%s: %s" % (v, problem))
                done[0] += 1
                if done[0] == 500:
                    rss_warm[0] = rss(server.pid)
        c.close()

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    if any(t.is_alive() for t in threads):
        failures.append("clients still running after 300 s")
    elapsed = time.monotonic() - t0
    rss_end = rss(server.pid)
    if done[0] != CONNECTIONS * PER_CONNECTION:
        failures.append("%d of %d requests answered" % (done[0], CONNECTIONS * PER_CONNECTION))
    if rss_warm[0] is None or rss_end - rss_warm[0] >= RSS_SLACK:
        failures.append("resident memory grew from %s to %d bytes under load" % (rss_warm[0], rss_end))
    status, _, _ = fetch(http.client.HTTPConnection("127.0.0.1", port, timeout=60), "/ui/top")
    if status != 200:
        failures.append("the server stopped answering after the load (%d)" % status)
    server.send_signal(signal.SIGTERM)
    rc = server.wait(timeout=30)
    if rc != 0:
        failures.append("exit %d after SIGTERM, want 0" % rc)
finally:
    if server.poll() is None:
        server.kill()
        server.wait()

for f in failures[:20]:
    print("FAIL: " + f)
if failures:
    sys.exit(1)
print("PASS: %d requests over %d connections in %.1f s, all complete and identical; "
      "resident memory %d -> %d KiB" % (CONNECTIONS * PER_CONNECTION, CONNECTIONS, elapsed,
                                        rss_warm[0] // 1024, rss_end // 1024))
