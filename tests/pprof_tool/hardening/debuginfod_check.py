#!/usr/bin/env python3
"""pprof-tool against a hostile debuginfod server on 127.0.0.1 (cli/debuginfod_bounds.h).

A legacy profile maps /usr/bin/true (stripped, with a build-id), so libdw asks DEBUGINFOD_URLS
for its debug info. The server answers every request with `Content-Length: 2 GiB` and then
trickles bytes (for at most 40 s). With DEBUGINFOD_MAXSIZE unset, pprof-tool's 512 MiB default
makes the client give up at once: the report is printed within 20 s and nothing large is left
in the cache. A cache path that is a symbolic link (or, when run as root, a directory owned by
another user) turns downloads off with one warning line and the server gets no request.
Skips (77) without libdebuginfod or /usr/bin/true.
Usage: debuginfod_check.py <pprof-tool> <work dir>
"""
import http.server
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import fail, fresh_dir, verdict  # noqa: E402

pprof, work = [os.path.abspath(a) for a in sys.argv[1:3]]
if not os.path.exists("/usr/bin/true") or not any(
        os.path.exists(os.path.join(d, "libdebuginfod.so.1"))
        for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu"]):
    print("SKIP: no libdebuginfod.so.1 or /usr/bin/true")
    sys.exit(77)
fresh_dir(work)
requests = []
stop = threading.Event()


class Hostile(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(2 << 30))
        self.end_headers()
        deadline = time.monotonic() + 40
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                self.wfile.write(b"\0" * 4096)
                self.wfile.flush()
            except OSError:
                return
            stop.wait(0.5)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d" % server.server_address[1]

prof = os.path.join(work, "true.heap")
with open(prof, "w") as f:
    f.write("heap profile: 1: 100 [1: 100] @ heapprofile\n1: 100 [1: 100] @ 0x555555556100\n"
            "MAPPED_LIBRARIES:\n555555554000-555555556000 r--p 00000000 08:01 1 /usr/bin/true\n"
            "555555556000-55555555a000 r-xp 00002000 08:01 1 /usr/bin/true\n")


def run(cache, extra_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    env.update({"DEBUGINFOD_URLS": url, "DEBUGINFOD_CACHE_PATH": cache}, **(extra_env or {}))
    t0 = time.monotonic()
    try:
        p = subprocess.run([pprof, "--text", prof], capture_output=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - t0
    return p.returncode, p.stderr.decode("utf-8", "replace"), time.monotonic() - t0


try:
    cache = os.path.join(work, "cache")
    rc, err, secs = run(cache)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(cache) for f in fs) if os.path.isdir(cache) else 0
    print("2 GiB body announced: exit %s in %.1f s, %d request(s), cache %d bytes" % (rc, secs, len(requests), size))
    if rc != 0 or secs > 20:
        fail("default DEBUGINFOD_MAXSIZE: want the report within 20 s, got exit %s after %.1f s" % (rc, secs))
    if not requests:
        fail("the server got no request: the test did not exercise debuginfod")
    if size > (1 << 20):
        fail("the cache holds %d bytes of the hostile body" % size)

    target = os.path.join(work, "elsewhere")
    os.makedirs(target)
    link = os.path.join(work, "cache_link")
    os.symlink(target, link)
    before = len(requests)
    rc, err, secs = run(link)
    lines = [l for l in err.splitlines() if "debuginfod" in l]
    if rc != 0 or len(lines) != 1 or "symbolic link" not in lines[0] or len(requests) != before:
        fail("cache path a symlink: want one warning and no request, got exit %s, %r, %d requests"
             % (rc, err[-300:], len(requests) - before))
    if os.geteuid() == 0:
        other = os.path.join(work, "other_user_cache")
        os.makedirs(other)
        os.chown(other, 65534, 65534)
        before = len(requests)
        rc, err, secs = run(other)
        if rc != 0 or "not by you" not in err or len(requests) != before:
            fail("cache owned by another user: want one warning and no request, got exit %s, %r" % (rc, err[-300:]))
    else:
        print("(not root: the cache owned by another user is not checked)")
finally:
    stop.set()
    server.shutdown()
sys.exit(verdict('debuginfod'))
