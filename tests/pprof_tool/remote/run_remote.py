#!/usr/bin/env python3
"""pprof-tool with an http:// profile (pprof-tool/cli/remote_source.h).

  live     a heapkit-preloaded workload (tests/profiler/http/http_workload.cc) with
           HEAPKIT_HTTP=127.0.0.1:0: `pprof-tool --text URL` of /debug/pprof/heap and
           /debug/pprof/allocs gives the same values for the workload's functions as
           `go tool pprof -raw URL` (both fetch the same quiet heap); --seconds=1 asks for a delta
           (the workload allocates nothing meanwhile: its functions are gone from it); --http
           on the URL serves the top table with them.
  errors   one line, exit 2, naming the URL and the cause: a closed port (connection refused),
           a 404 (with the server's message), an answer that is not a profile, a server that
           never answers (--timeout=1: it gives up after about a second), an answer over the
           256 MiB cap (read no further than it); and that --seconds=N reaches the server as
           seconds=N, replacing the URL's own.
Exit 77 (skipped) when go is missing (live).
"""
import argparse
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "profiler", "http"))
import run_http  # noqa: E402  (Program, go_env, raw_leaf_values, fail)

fail = run_http.fail


def pprof_tool(args, *argv, timeout=120):
    return subprocess.run([args.pprof_tool, *argv], capture_output=True, text=True,
                          timeout=timeout)


def leaf_values(args, url, option):
    """pprof-tool --text on the URL: flat value per function, as run_http's oracle reads it.
    All rows: the scrapes before this one have allocated in the program too (symbolizing)."""
    out = pprof_tool(args, "--text", option, "--nodecount=1000", "--nodefraction=0", url,
                     timeout=300)
    if out.returncode != 0:
        fail("pprof-tool %s failed: %s" % (url, out.stderr))
    values = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)([kMGT]?B?)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+[kMGT]?B?\s+[\d.]+%\s+(\S+)",
                     line)
        if m:
            scale = {"": 1, "B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[m.group(2)]
            values[m.group(3)] = float(m.group(1)) * scale
    return values, out.stdout


def live(args):
    if shutil.which("go") is None:
        print("SKIP: go is not installed")
        sys.exit(77)
    os.makedirs(args.workdir, exist_ok=True)
    p = run_http.Program(args)
    checked = 0
    for endpoint, index, option, functions in (
            ("heap", 3, "--inuse_space", ("KeepSmall", "KeepLarge")),
            ("allocs", 1, "--alloc_space", ("KeepSmall", "KeepLarge", "Churn")),
            ("heap", 2, "--inuse_objects", ("KeepSmall", "KeepLarge"))):
        url = p.url + "/debug/pprof/" + endpoint
        raw = subprocess.run(["go", "tool", "pprof", "-raw", url], capture_output=True, text=True,
                             timeout=300, env=run_http.go_env(args.workdir))
        if raw.returncode != 0:
            fail("go tool pprof -raw failed: " + raw.stderr)
        go_values = run_http.raw_leaf_values(raw.stdout, index)
        mine, report = leaf_values(args, url, option)
        print(endpoint, option, "go tool pprof:", {f: go_values.get(f) for f in functions},
              "pprof-tool:", {f: mine.get(f) for f in functions})
        for function in functions:
            value, ours = go_values.get(function), mine.get(function)
            if not value or ours is None:
                fail("%s %s: %s missing (go %s, pprof-tool %s):\n%s" % (url, option, function,
                                                                        value, ours, report))
            if abs(ours - value) > 0.01 * value + 1:  # pprof-tool prints 3-4 significant digits
                fail("%s %s: %s: go tool pprof %d, pprof-tool %d" % (url, option, function,
                                                                     value, ours))
            checked += 1
    if checked != 7:
        fail("compared %d rows" % checked)

    # --seconds=1: a delta of a quiet second; the server answers after it.
    start = time.time()
    r = pprof_tool(args, "--text", "--alloc_space", "--seconds=1", p.url + "/debug/pprof/allocs")
    took = time.time() - start
    if r.returncode != 0:
        fail("--seconds=1 failed: " + r.stderr)
    if took < 1 or re.search(r"KeepSmall|KeepLarge|Churn", r.stdout):
        fail("--seconds=1 took %.2f s and showed:\n%s" % (took, r.stdout))

    # --http on the URL: the fetched profile in the web UI.
    server = subprocess.Popen([args.pprof_tool, "--no_browser", "--http=127.0.0.1:0",
                               p.url + "/debug/pprof/heap"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = server.stdout.readline().decode()
        prefix = "Serving web UI on "
        if not line.startswith(prefix):
            fail("--http: first line %r, stderr %r" % (line, server.stderr.read().decode()))
        with urllib.request.urlopen(line[len(prefix):].strip() + "/ui/top", timeout=60) as page:
            html = page.read().decode()
        if "KeepSmall" not in html or "KeepLarge" not in html:
            fail("--http: the top table lacks the workload's functions")
    finally:
        server.terminate()
        server.wait(timeout=30)
    p.finish()
    print("live: %d rows agree with go tool pprof; --seconds and --http work" % checked)


class FakeServer:
    """One behaviour per path: 404, a non-profile body, silence; records the request lines."""

    def __init__(self):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.requests.append(self.path)
                if self.path.startswith("/slow"):
                    time.sleep(8)  # longer than the client's --timeout
                    return
                if self.path.startswith("/huge"):
                    self.send_response(200)
                    self.send_header("Content-Length", str(300 << 20))
                    self.end_headers()
                    chunk = b"\0" * (1 << 20)
                    try:
                        for _ in range(300):
                            self.wfile.write(chunk)
                    except OSError:
                        pass
                    return
                if self.path.startswith("/text"):
                    body = b"<html>this is not a heap profile</html>\n"
                    self.send_response(200)
                elif self.path.startswith("/debug/pprof/heap"):
                    body = b"not really a profile\n"
                    self.send_response(200)
                else:
                    body = b"404 page not found\n"
                    self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def expect_error(args, pattern, *argv, max_seconds=30):
    start = time.time()
    r = pprof_tool(args, "--text", *argv)
    took = time.time() - start
    lines = r.stderr.strip().splitlines()
    if r.returncode != 2 or len(lines) != 1 or not re.search(pattern, lines[0]):
        fail("%s: exit %d, stderr %r (expected one line matching %r)" % (argv, r.returncode,
                                                                       r.stderr, pattern))
    if took > max_seconds:
        fail("%s: took %.1f s" % (argv, took))
    print("%-60s -> %s (%.1f s)" % (" ".join(argv)[:60], lines[0], took))
    return took


def errors(args):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed = "http://127.0.0.1:%d/debug/pprof/heap" % s.getsockname()[1]
    s.close()  # nobody listens there now
    expect_error(args, re.escape(closed) + r": connection refused", closed)
    fake = FakeServer()
    expect_error(args, re.escape(fake.url) + r"/nothing: HTTP 404 \(404 page not found\)",
                 fake.url + "/nothing")
    expect_error(args, re.escape(fake.url) + r"/text", fake.url + "/text")
    took = expect_error(args, re.escape(fake.url) + r"/slow: timed out after 1 s", "--timeout=1",
                        fake.url + "/slow", max_seconds=5)
    if took < 0.9:
        fail("the timeout fired after %.2f s" % took)
    expect_error(args, re.escape(fake.url) + r"/huge: the answer is larger than 256 MiB",
                 fake.url + "/huge")
    expect_error(args, r"https://127\.0\.0\.1:1/x: only http:// URLs", "https://127.0.0.1:1/x")
    # --seconds=N replaces the URL's own seconds= and keeps its other parameters.
    fake.requests.clear()
    pprof_tool(args, "--seconds=7", "--timeout=5", fake.url + "/debug/pprof/heap?seconds=3&gc=1")
    if fake.requests != ["/debug/pprof/heap?gc=1&seconds=7"]:
        fail("--seconds=7 sent %s" % fake.requests)
    print("errors: one line each; --seconds reaches the server")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["live", "errors"])
    ap.add_argument("--program", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--pprof-tool", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    {"live": live, "errors": errors}[args.check](args)


if __name__ == "__main__":
    main()
