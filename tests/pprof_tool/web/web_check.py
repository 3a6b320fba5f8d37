#!/usr/bin/env python3
"""pprof-tool --http and --timeline on heap dumps of a known program (user_frames_prog.cc).

  - profiles the program with HEAP_PROFILE_INUSE_INTERVAL so it writes several dumps;
  - --timeline=x.svg on the dumps is well-formed SVG naming the largest function;
  - starts `pprof-tool --http=127.0.0.1:0` on the dumps, reads the port from its first line,
    fetches every view (200, names the known functions; the source view's routines heaviest
    first; the Content-Security-Policy), bad requests (unknown page, bad
    regex, unknown sample type, huge query) answer 4xx with one line and the server lives on;
  - SIGTERM ends the server with exit 0. The server is killed whatever happens.
Usage: web_check.py <pprof-tool> <libheapkit.so> <program> <work dir>
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET

pprof, lib, prog, work = sys.argv[1:5]
KNOWN = ["app::FillVector", "app::FillString", "app::FillMap"]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import fail, failures, local_page as get  # noqa: E402


def make_dumps():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, HEAPPROFILE=os.path.join(work, "prof"), LD_PRELOAD=lib,
               HEAP_PROFILE_INUSE_INTERVAL=str(2 << 20), TCMALLOC_SAMPLE_PARAMETER="1")
    p = subprocess.run([prog], env=env, check=True, timeout=60, capture_output=True)
    dumps = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".heap"))
    if len(dumps) < 3:
        sys.exit("FAIL: the program wrote %d dumps, want several" % len(dumps))
    # The profiler's log line per dump: "Dumping heap profile to <file> (<reason>)".
    reasons = dict(re.findall(r"Dumping heap profile to (\S+) \((.*)\)", p.stderr.decode()))
    return dumps, reasons


def check_timeline(dumps, reasons):
    out = os.path.join(work, "timeline.svg")
    p = subprocess.run([pprof, "--timeline=" + out, prog] + dumps, capture_output=True, timeout=60)
    if p.returncode != 0:
        return fail("--timeline: exit %d: %s" % (p.returncode, p.stderr.decode()))
    root = ET.parse(out).getroot()  # raises on malformed XML
    ns = "{http://www.w3.org/2000/svg}"
    bands = [e.get("data-name") for e in root.iter(ns + "polygon")]
    columns = list(root.iter(ns + "rect"))
    if "app::FillVector" not in bands:
        fail("--timeline: no band for app::FillVector: %r" % bands)
    if root.find(".//" + ns + "script") is not None:
        fail("--timeline: the SVG has a script")
    titles = [t.text or "" for t in root.iter(ns + "title")]
    if not any(os.path.basename(dumps[-1]) in t for t in titles):
        fail("--timeline: no hover text names the last dump %s" % dumps[-1])
    if len([c for c in columns if c.get("class") == "dump"]) != len(dumps):
        fail("--timeline: want one column per dump (%d)" % len(dumps))
    # Each column's hover text gives the reason the profiler logged for that dump.
    for d, path in enumerate(dumps):
        want = "reason: %s" % reasons.get(path, "?")
        if not any(t.startswith("dump %d: %s" % (d + 1, os.path.basename(path))) and want in t.split("\n")
                   for t in titles):
            fail("--timeline: dump %d's hover text lacks %r" % (d, want))


def total_line(text):
    """The report's "... of <total> total" line."""
    m = re.search(r"Showing nodes accounting for [^\n<]*? of (\S+) total", text)
    return m.group(1) if m else None


def check_series_shows_latest(dumps):
    """The dumps of one process are a series: without options the CLI and the web UI show the
    last dump (its header's in-use total, exact in this run) and say so, not the sum."""
    last = dumps[-1]
    with open(last) as f:
        want = int(re.match(r"heap profile:\s*\d+:\s*(\d+)", f.readline()).group(1))
    p = subprocess.run([pprof, prog] + dumps, capture_output=True, timeout=60, text=True)
    if p.returncode != 0:
        return fail("CLI on the series: exit %d: %s" % (p.returncode, p.stderr))
    name = os.path.basename(last)
    if "Dump: %s, the latest of %d dumps of one process" % (name, len(dumps)) not in p.stdout:
        fail("CLI on the series: the header does not name the latest dump:\n" + p.stdout[:600])
    alone = subprocess.run([pprof, prog, last], capture_output=True, timeout=60, text=True)
    if total_line(p.stdout) is None or total_line(p.stdout) != total_line(alone.stdout):
        fail("CLI on the series: total %r, the last dump alone %r" %
             (total_line(p.stdout), total_line(alone.stdout)))
    exact = subprocess.run([pprof, "--show_bytes", prog] + dumps, capture_output=True,
                           timeout=60, text=True)
    if total_line(exact.stdout) != str(want):
        fail("CLI --show_bytes on the series: total %r, the last dump's header %d" %
             (total_line(exact.stdout), want))
    merged = subprocess.run([pprof, "--show_bytes", "--merge", prog] + dumps,
                            capture_output=True, timeout=60, text=True)
    if total_line(merged.stdout) in (None, str(want)) or "Sum of the" not in merged.stdout:
        fail("--merge does not sum the series: %r" % merged.stdout[:400])
    first = subprocess.run([pprof, "--show_bytes", "--dump=1", prog] + dumps,
                           capture_output=True, timeout=60, text=True)
    with open(dumps[0]) as f:
        want_first = int(re.match(r"heap profile:\s*\d+:\s*(\d+)", f.readline()).group(1))
    if total_line(first.stdout) != str(want_first):
        fail("--dump=1: total %r, dump 1's header %d" % (total_line(first.stdout), want_first))
    server, port = start_server(["--http=127.0.0.1:0", "--show_bytes", prog] + dumps)
    if port is not None:
        status, body = get(port, "/ui/top")
        if status != 200 or total_line(body) != str(want) or "Dump: " + name not in body:
            fail("web UI on the series: /ui/top status %d, total %r, want the last dump's %d" %
                 (status, total_line(body), want))
        status, body = get(port, "/ui/top?dump=1")
        if status != 200 or total_line(body) != str(want_first):
            fail("web UI dump=1: status %d, total %r, want %d" % (status, total_line(body), want_first))
        n = len(dumps)
        status, body = get(port, "/ui/top?dump=%d&base=1" % n)
        if status != 200 or total_line(body) != str(want - want_first):
            fail("web UI dump=%d&base=1: status %d, total %r, want %d" %
                 (n, status, total_line(body), want - want_first))
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


servers = []


def start_server(args):
    """Starts pprof-tool with `args`; returns (process, port) or (process, None)."""
    server = subprocess.Popen([pprof, "--no_browser"] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    servers.append(server)
    line = server.stdout.readline().decode()
    prefix = "Serving web UI on http://127.0.0.1:"
    if not line.startswith(prefix):
        fail("%s: first line %r, stderr %r" % (args[0], line, server.stderr.read().decode()))
        return server, None
    return server, int(line[len(prefix):])


def check_server(dumps):
    server, port = start_server(["--http=127.0.0.1:0", prog] + dumps)
    if port is not None:
        views = {
            "/ui/": KNOWN, "/ui/top": KNOWN, "/ui/top?si=alloc_space": KNOWN + ["Type: alloc_space"],
            "/ui/top?si=alloc_objects": ["app::FillMap", "Type: alloc_objects"],
            "/ui/flamegraph": ["/ui/flamegraph.svg"], "/ui/flamegraph.svg": KNOWN,
            "/ui/peek?f=FillVector": ["app::FillVector"],
            "/ui/source?f=FillString": ["app::FillString", "user_frames_prog.cc"],
            "/ui/source": ["app::FillVector"],
            "/ui/timeline": ["app::FillVector", os.path.basename(dumps[-1])],
            "/ui/top?dump=1": ["Dump: " + os.path.basename(dumps[0])],
            "/ui/top?f=FillMap": ["app::FillMap"],
        }
        for path, needles in views.items():
            status, body = get(port, path)
            if status != 200:
                fail("%s: status %d: %s" % (path, status, body[:200]))
                continue
            for n in needles:
                if n not in body:
                    fail("%s: does not name %s" % (path, n))
        # The source view: the routines heaviest first (flat, then cum), each with its weight.
        status, body = get(port, "/ui/source")
        scale = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
        weights = [(float(f) * scale[fu], float(c) * scale[cu]) for f, fu, c, cu in re.findall(
            r"ROUTINE =+ \S+ in [^\n]*\n\s*([\d.]+)([kMG]?B)\s+([\d.]+)([kMG]?B) \(flat, cum\)", body)]
        if len(weights) < 3 or weights != sorted(weights, reverse=True):
            fail("/ui/source: the routines are not heaviest first: %r" % weights)
        # Every answer carries the policy that lets a page load nothing from elsewhere.
        with urllib.request.urlopen("http://127.0.0.1:%d/ui/" % port, timeout=60) as r:
            policy = r.headers.get("Content-Security-Policy", "")
        if not policy.startswith("default-src 'none';"):
            fail("/ui/: Content-Security-Policy %r" % policy)
        # Filters really apply: ignoring FillVector removes it from the table.
        status, body = get(port, "/ui/top?i=FillVector")
        if status != 200 or "app::FillVector" in body or "app::FillString" not in body:
            fail("/ui/top?i=FillVector: status %d, FillVector still listed or FillString gone" % status)
        bad = ["/nosuchpage", "/ui/top?f=(", "/ui/top?si=bogus", "/ui/top?dump=99",
               "/ui/top?dump=0", "/ui/top?base=1&dump=all",
               "/ui/top?f=" + "a" * 5000, "/ui/top?f=" + "a" * 20000]
        for path in bad:
            status, body = get(port, path)
            if not 400 <= status < 500:
                fail("%s: status %d, want 4xx" % (path[:40], status))
            elif path != "/ui/top?f=" + "a" * 20000 and len(body.strip().splitlines()) != 1:
                fail("%s: want one line, got %r" % (path[:40], body[:200]))
        status, _ = get(port, "/ui/top")
        if status != 200:
            fail("the server stopped answering after the bad requests (%d)" % status)
        # The port is taken: a second server says so and exits 2 (it must not share the port).
        p = subprocess.run([pprof, "--no_browser", "--http=127.0.0.1:%d" % port, prog, dumps[0]],
                           capture_output=True, timeout=60)
        if p.returncode != 2 or b"cannot listen" not in p.stderr:
            fail("a second server on port %d: exit %d, stderr %r" % (port, p.returncode, p.stderr))
        server.send_signal(signal.SIGTERM)
        rc = server.wait(timeout=20)
        if rc != 0:
            fail("exit %d after SIGTERM, want 0" % rc)


def check_diff_and_leaks(dumps):
    # --base: app::FillVector is the same in the first and the last dump, so the difference
    # leaves it out; app::FillString grew. An empty host binds 127.0.0.1.
    server, port = start_server(["--http=:0", "--base=" + dumps[0], prog, dumps[-1]])
    if port is not None:
        status, body = get(port, "/ui/top")
        if status != 200 or "difference to the base" not in body or \
                "app::FillString" not in body or "app::FillVector" in body:
            fail("--base: /ui/top is not the difference (%d): %s" % (status, body[-600:]))
    # Leak-checker dump: pages titled as leaks, in-use values only.
    hc = os.path.join(work, "hc")
    os.makedirs(hc)
    subprocess.run([prog], env=dict(os.environ, HEAPCHECK="normal", HEAP_CHECK_DUMP_DIRECTORY=hc,
                                    LD_PRELOAD=lib), capture_output=True, timeout=60)
    leaks = [os.path.join(hc, f) for f in os.listdir(hc) if f.endswith("-end.heap")]
    if not leaks:
        return fail("the leak checker wrote no *-end.heap dump")
    server, port = start_server(["--http=127.0.0.1:0", "--heapcheck", prog, leaks[0]])
    if port is not None:
        status, body = get(port, "/ui/top")
        if status != 200 or "<title>Leaks: Top" not in body or "app::FillVector" not in body:
            fail("--heapcheck: /ui/top is not titled as leaks or misses app::FillVector (%d)" % status)
        status, _ = get(port, "/ui/top?si=alloc_space")
        if status != 400:
            fail("--heapcheck: si=alloc_space answered %d, want 400" % status)


dumps, reasons = make_dumps()
try:
    check_timeline(dumps, reasons)
    check_series_shows_latest(dumps)
    check_server(dumps)
    check_diff_and_leaks(dumps)
finally:
    for s in servers:
        if s.poll() is None:
            s.kill()
            s.wait()
if failures:
    sys.exit(1)
print("PASS: %d dumps; views, bad requests, SIGTERM and --timeline" % len(dumps))
