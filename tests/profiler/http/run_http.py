#!/usr/bin/env python3
"""End-to-end checks of HEAPKIT_HTTP (profiler/http/http_server.h) on http_workload.cc.

  go_client  go pprof's profile package reads every endpoint (endpoint/endpoint_test.go)
  oracle     `go tool pprof -raw` on /debug/pprof/heap and /debug/pprof/allocs gives the same
             leaf functions and values as pprof-tool on the ?debug=1 text of the same moment
             (the text a HEAPPROFILE dump holds)
  hostile    idle sockets, slowloris heads, a 1 MB head, bad paths, a connect/close loop: the
             program's own threads are never stalled and the endpoint answers afterwards
  secure     a bad address or a host name is one line, and the program runs on
  prometheus a real Prometheus server scrapes /metrics (the README's configuration, with a
             1 s interval) and its HTTP API returns the series with the program's values
  leaks      /debug/pprof/leaks on leak_server.cc under load from four client threads, a leak
             planted mid-run: found by stack and size, every request answered, and the answers
             identical to a run without HEAPCHECK and without checks
  admission  the live check's spacing: 429 with Retry-After and the last check's line, the
             interval's default and HEAP_CHECK_LIVE_MIN_INTERVAL_MS, a bad value one line
  fleet_mode HEAPCHECK=local, the mode for a service: a leak planted in leak_server.cc is found
             by /debug/pprof/leaks, and SIGTERM ends the service with status 0 (HEAPCHECK=normal:
             the same stop exits 1 with the exit check's report, and does not hang although
             the main thread holds stdin's lock in fgets: heapcheck/bounded_exit.h)
  delta      delta_heap's alloc_* equal the difference of two allocs snapshots, in use absolute
  gperftools /pprof/heap, /pprof/growth, /pprof/cmdline, /pprof/symbol (GET and POST)
  stripped   a stripped build of the workload: the fetched profile names none of its functions,
             and pprof-tool (binary argument, build-id --symbol_path) and Google's pprof
             (PPROF_BINARY_PATH) name them later from the unstripped binary
  symbol_cost a 64 KiB /pprof/symbol request in a process with 2,000 mappings reads the maps
             once (read calls counted, not CPU timed; a CPU budget that cuts it short must
             say so in the answer's header), and 240,000 distinct addresses grow the
             process's RSS by at most 8 MiB once the code they land in has been looked into
  storm      a scrape storm leaves the profile's sampled totals unchanged (the server's own
             allocations are never sampled)
  growth_server  symbolizing scrapes grow the heap, not the growth profile, which holds no
             frame of the endpoint or libdw (the server thread's growths are not recorded)
  attack     slowloris connections and a 10,000-connection loop: a scraper is answered promptly
             throughout
  api        HeapkitStartHttpServer from a program linked to libheapkit; a second call refused
  origin     every path refuses rebinding Hosts (421) and other sites' Origin, Sec-Fetch-Site
             and, where the endpoint acts, Referer (403); no leak check runs for them; the
             refusals are counted in /metrics
  browser    headless chromium: a rebound name reads nothing, a foreign page's <img> of
             /debug/pprof/leaks runs no check
  uid        a client of another uid (nobody) is refused; an allowed user and the bearer token
             let it in, a wrong token does not; bad token files keep the endpoint off
  prometheus_token  Prometheus running as nobody scrapes with credentials_file (up == 1, the
             values), and without it is refused (up == 0)
  unix       HEAPKIT_HTTP=unix:/path: mode 0600, same uid answered, nobody refused; a link or a
             foreign file at the path refused with one line, a stale socket of ours replaced
  emfile     the program out of descriptors, a client connected and gone: the server thread
             stays idle (its CPU time over 2 s)
  ports      port forms: digits only; the start line names the port
  metrics_rss  /metrics after a profile scrape: heapkit_resident_memory_bytes' parts add up to
             the RSS of /proc/<pid>/smaps_rollup within 5 %, the metadata resident part is
             apart from the reserved one, heapkit_build_info and process_start_time_seconds
             are there, and `promtool check metrics` accepts the text
  fetch_memory  the first and the 100th symbolized /debug/pprof/heap leave RSS and
             heapkit_heap_inuse_bytes within FETCH_BOUND_MIB of where they were, for a stripped
             copy of the workload and its -g build (the profile names the -g build's functions)
  memory_view  a HEAPPROFILE dump after a profile scrape counts the endpoint's caches apart
             (`# heapkit: memory heapkit_endpoint`, its own row in `pprof-tool --memory`)
Exit 77 (skipped) when go, go pprof's sources, prometheus or chromium are missing.
"""
import argparse
import gzip
import json
import math
import os
import pwd
import re
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

GOPATH = "/usr/share/gocode"
NOBODY = pwd.getpwnam("nobody").pw_uid
# An interpreter nobody may run (this one may live in a private home directory).
NOBODY_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
# The start line: where, and who may read it (profiler/http/access_policy.h).
START_LINE = re.compile(r"heapkit: HTTP endpoint listening on (\S+) \(clients: ([^;]+); "
                        r"token: ([^;)]+)(?:; other hosts: ([^)]+))?\)\n")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


class Program:
    def __init__(self, args, extra_args=(), env_extra=None):
        env = dict(os.environ, HEAPKIT_HTTP="127.0.0.1:0", LD_PRELOAD=args.preload)
        env.pop("TCMALLOC_SAMPLE_PARAMETER", None)
        env.update(env_extra or {})
        self.proc = subprocess.Popen([args.program, *extra_args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        line = self.proc.stderr.readline().decode()
        if line == "Starting tracking the heap\n":  # HEAPPROFILE's line (gperftools')
            line = self.proc.stderr.readline().decode()
        m = START_LINE.fullmatch(line)
        if not m or not re.fullmatch(r"127\.0\.0\.1:\d+", m.group(1)):
            fail("expected the start line, got %r" % line)
        self.start_line = line
        self.url = "http://" + m.group(1)
        self.port = int(m.group(1).rsplit(":", 1)[1])
        if self.proc.stdout.readline() != b"ready\n":
            fail("the workload did not start")

    def get(self, path, timeout=30):
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def finish(self):
        out, err = self.proc.communicate(b"", timeout=60)
        if self.proc.returncode != 0:
            fail("workload exited with %d: %s" % (self.proc.returncode, err.decode()[-2000:]))
        return out.decode(), err.decode()


def go_env(workdir):
    return dict(os.environ, GOPATH=GOPATH, GOFLAGS="-mod=mod", GOPROXY="off", GO111MODULE="off",
                GOCACHE=os.path.join(workdir, "gocache"), HOME=workdir)


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else ""


def go_client(args):
    # DEBUGINFOD_URLS set: the in-process symbolizer must still use local files only and never
    # load the debuginfod client (libcurl, OpenSSL) into the program.
    p = Program(args, env_extra={"DEBUGINFOD_URLS": "http://127.0.0.1:9"})
    env = go_env(args.workdir)
    env.update(HEAPKIT_TEST_URL=p.url, HEAPKIT_TEST_PROGRAM=os.path.realpath(args.program),
               HEAPKIT_TEST_BUILD_ID=build_id(args.program))
    r = subprocess.run(["go", "test", "-count=1", "-v", "."], cwd=args.go_test_dir, env=env,
                       capture_output=True, text=True, timeout=600)
    with open("/proc/%d/maps" % p.proc.pid) as f:
        network = sorted({l.split()[-1] for l in f
                          if re.search(r"libdebuginfod|libcurl|libssl", l)})
    p.finish()
    if network:
        fail("symbolizing loaded %s into the program" % network)
    print(r.stdout[-6000:], r.stderr[-3000:])
    if r.returncode != 0:
        fail("go test failed")


def raw_leaf_values(text, index):
    """Leaf function → summed value `index` from `go tool pprof -raw`'s listing."""
    samples, locations = [], {}
    section = None
    for line in text.splitlines():
        if line.startswith("Samples:"):
            section = "samples"
            continue
        if line.startswith("Locations"):
            section = "locations"
            continue
        if line.startswith("Mappings"):
            section = None
            continue
        if section == "samples":
            # Go's four values, then (a sampled profile's) their four variances.
            m = re.match(r"\s+((?:\d+\s+)*\d+):\s+([\d ]+)$", line)
            if m and len(m.group(1).split()) in (4, 8):
                samples.append((int(m.group(1).split()[index]), m.group(2).split()))
        elif section == "locations":
            m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", line)
            if m:
                locations[m.group(1)] = m.group(2)
    leaves = {}
    for value, ids in samples:
        leaf = locations.get(ids[0], "?")
        leaves[leaf] = leaves.get(leaf, 0) + value
    return leaves


def pprof_tool_leaf_values(pprof_tool, path, option):
    """pprof-tool --text: flat value per function (the leaf's), in bytes or objects."""
    out = subprocess.run([pprof_tool, "--text", option, "--nodecount=20", "--nodefraction=0", path],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        fail("pprof-tool failed: " + out.stderr)
    values = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)([kMGT]?B?)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+[kMGT]?B?\s+[\d.]+%\s+(\S+)",
                     line)
        if m:
            scale = {"": 1, "B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}.get(m.group(2), 1)
            values[m.group(3)] = float(m.group(1)) * scale
    return values, out.stdout


def oracle(args):
    if shutil.which("go") is None:
        sys.exit(77)
    p = Program(args)
    os.makedirs(args.workdir, exist_ok=True)
    status, text = p.get("/debug/pprof/heap?debug=1")
    legacy = os.path.join(args.workdir, "dump.heap")
    with open(legacy, "wb") as f:
        f.write(text)
    checked = 0
    # The workload's own allocation sites (pprof-tool folds the C++ library's allocation frames
    # into their callers, go tool pprof does not: the two agree on the program's functions).
    for endpoint, index, option, functions in (
            ("heap", 3, "--inuse_space", ("KeepSmall", "KeepLarge")),
            ("allocs", 1, "--alloc_space", ("KeepSmall", "KeepLarge", "Churn")),
            ("heap", 2, "--inuse_objects", ("KeepSmall", "KeepLarge"))):
        raw = subprocess.run(["go", "tool", "pprof", "-raw", p.url + "/debug/pprof/" + endpoint],
                             capture_output=True, text=True, timeout=300, env=go_env(args.workdir))
        if raw.returncode != 0:
            fail("go tool pprof -raw failed: " + raw.stderr)
        go_values = raw_leaf_values(raw.stdout, index)
        tool_values, report = pprof_tool_leaf_values(args.pprof_tool, legacy, option)
        print(endpoint, option, "go tool pprof:", {f: go_values.get(f) for f in functions},
              "pprof-tool:", {f: tool_values.get(f) for f in functions})
        for function in functions:
            value, mine = go_values.get(function), tool_values.get(function)
            if not value or mine is None:
                fail("%s: %s missing (go %s, pprof-tool %s):\n%s" % (option, function, value,
                                                                     mine, report))
            # pprof-tool prints three or four significant digits: 1% apart at most.
            if abs(mine - value) > 0.01 * value + 1:
                fail("%s: %s: go tool pprof %d, pprof-tool %d" % (option, function, value, mine))
            checked += 1
    p.finish()
    if checked < 7:
        fail("compared only %d rows" % checked)
    print("oracle: %d rows agree" % checked)


def hostile(args):
    p = Program(args, extra_args=["busy"])
    host, port = "127.0.0.1", int(p.url.rsplit(":", 1)[1])
    opened = []
    deadline = time.time() + 20
    # 1. Idle sockets and slowloris heads (a byte now and then), more than the cap.
    for i in range(40):
        s = socket.create_connection((host, port), timeout=5)
        if i % 2:
            s.sendall(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
        opened.append(s)
    # 2. A 1 MB head: 431 or a closed connection, never more than the cap read.
    big = socket.create_connection((host, port), timeout=15)
    try:
        big.sendall(b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
    except OSError:
        pass
    try:
        answer = big.recv(200)
    except OSError:
        answer = b""
    big.close()
    if answer and not answer.startswith(b"HTTP/1.1 431"):
        fail("1 MB head answered %r" % answer[:60])
    for s in opened:
        s.close()
    # 3. Bad paths and requests, and a bounded connect/close loop.
    bad = [b"GET /../../etc/passwd HTTP/1.1\r\n\r\n", b"POST /metrics HTTP/1.1\r\n\r\n",
           b"\x00\xff garbage\r\n\r\n", b"GET /debug/pprof/heap?debug=%00 HTTP/1.1\r\n\r\n"]
    codes = set()
    for i in range(200):
        if time.time() > deadline:
            break
        try:
            s = socket.create_connection((host, port), timeout=5)
            s.sendall(bad[i % len(bad)])
            codes.add(s.recv(12)[9:12])
            s.close()
        except OSError:
            pass
    for i in range(2000):
        try:
            socket.create_connection((host, port), timeout=5).close()
        except OSError:
            pass
    if not codes <= {b"400", b"404", b"405", b"421", b""}:  # 421: no Host
        fail("bad requests answered %r" % codes)
    # 4. The endpoint still answers once the hostile connections are gone (their deadlines
    # are 5 s at most).
    time.sleep(6)
    status, body = p.get("/metrics", timeout=10)
    if status != 200 or b"heapkit_heap_inuse_bytes" not in body:
        fail("no /metrics after the hostile clients: %d" % status)
    out, err = p.finish()
    m = re.search(r"slowest_round_us (\d+)", out)
    if not m:
        fail("no timing from the workload: %r" % out)
    slowest = int(m.group(1))
    print("hostile: codes %s, slowest allocation round of the program %d us" % (codes, slowest))
    # A round is 100 malloc/free pairs; a thread waiting on a client would wait out a 5 s
    # deadline. 1 s leaves room for a loaded machine's scheduling.
    if slowest > 1000000:
        fail("the program's thread was stalled for %d us" % slowest)


def secure(args):
    # A bad address: one line, and the program runs on.
    env = dict(os.environ, HEAPKIT_HTTP="127.0.0.1:99999", LD_PRELOAD=args.preload)
    r = subprocess.run([args.program], input=b"", capture_output=True, env=env, timeout=60)
    lines = r.stderr.decode().splitlines()
    if r.returncode != 0 or lines != ["heapkit: HEAPKIT_HTTP: bad port '99999' (1 to 5 digits, "
                                      "at most 65535); the HTTP endpoint is off"]:
        fail("bad port: rc %d, %r" % (r.returncode, lines))
    # Not a numeric address: refused, never resolved.
    env["HEAPKIT_HTTP"] = "example.com:80"
    r = subprocess.run([args.program], input=b"", capture_output=True, env=env, timeout=60)
    if r.returncode != 0 or len(r.stderr.decode().splitlines()) != 1:
        fail("host name: %r" % r.stderr)
    print("secure: bad addresses give one line")


def prometheus_query(api, expression):
    """The first value of an instant query to the Prometheus server at `api`, or None."""
    url = "http://%s/api/v1/query?query=%s" % (api, urllib.parse.quote(expression))
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            result = json.load(r)["data"]["result"]
    except (OSError, ValueError, KeyError):
        return None
    return float(result[0]["value"][1]) if result else None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def prometheus(args):
    import json
    if shutil.which("prometheus") is None:
        print("skipped: prometheus missing")
        sys.exit(77)
    p = Program(args)
    target = p.url[len("http://"):]
    config = os.path.join(args.workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write("scrape_configs:\n"
                "  - job_name: heapkit\n"
                "    scrape_interval: 1s\n"
                "    static_configs:\n"
                "      - targets: [\"%s\"]\n" % target)
    shutil.rmtree(os.path.join(args.workdir, "data"), ignore_errors=True)
    api = "127.0.0.1:%d" % free_port()
    log = open(os.path.join(args.workdir, "prometheus.log"), "w")
    server = subprocess.Popen(["prometheus", "--config.file=" + config,
                               "--storage.tsdb.path=" + os.path.join(args.workdir, "data"),
                               "--web.listen-address=" + api], stdout=log, stderr=log)
    try:
        def query(expression):
            return prometheus_query(api, expression)
        deadline = time.time() + 120
        values = {}
        names = ["heapkit_heap_inuse_bytes", "heapkit_heap_mapped_bytes",
                 "heapkit_metadata_resident_bytes", "process_resident_memory_bytes",
                 "heapkit_allocated_bytes_total", "heapkit_freed_objects_total"]
        while time.time() < deadline:
            # A few scrapes: the counter has a rate over them.
            scrapes = query('count_over_time(up{job="heapkit"}[1m])') or 0
            if scrapes >= 3:
                values = {n: query(n) for n in names}
                if all(v is not None for v in values.values()):
                    break
            time.sleep(1)
        if query('up{job="heapkit"}') != 1:
            fail("Prometheus does not see the target up: " + open(log.name).read()[-2000:])
        missing = [n for n in names if values.get(n) is None]
        if missing:
            fail("series missing in Prometheus: %s" % missing)
        # The program is idle: Prometheus' last value equals what /metrics says now.
        status, body = p.get("/metrics")
        direct = {l.split()[0]: float(l.split()[1]) for l in body.decode().splitlines()
                  if l and not l.startswith("#")}
        for n in ("heapkit_heap_inuse_bytes", "heapkit_heap_mapped_bytes"):
            if abs(values[n] - direct[n]) > 0.05 * direct[n]:
                fail("%s: Prometheus %g, the program %g" % (n, values[n], direct[n]))
        if not 96 * 2**20 <= values["heapkit_heap_inuse_bytes"] <= 160 * 2**20:
            fail("heapkit_heap_inuse_bytes %g, the program holds 96 MiB" % values["heapkit_heap_inuse_bytes"])
        print("prometheus after %d scrapes: %s" % (scrapes, values))
    finally:
        server.terminate()
        server.wait(timeout=30)
        p.finish()


class LeakServer:
    """leak_server.cc with the endpoint on; `command` talks to its stdin."""

    def __init__(self, args, env_extra=None):
        env = dict(os.environ, HEAPKIT_HTTP="127.0.0.1:0", LD_PRELOAD=args.preload)
        env.pop("TCMALLOC_SAMPLE_PARAMETER", None)
        env.pop("HEAPCHECK", None)
        env.update(env_extra or {})
        self.proc = subprocess.Popen([args.leak_server], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.early_stderr = ""  # lines before the start line (settings the runtime ignored)
        for _ in range(8):
            line = self.proc.stderr.readline().decode()
            m = START_LINE.fullmatch(line)
            if m or not line:
                break
            self.early_stderr += line
        if not m:
            fail("expected the start line, got %r" % (self.early_stderr + line))
        self.url = "http://" + m.group(1)
        self.http_port = int(m.group(1).rsplit(":", 1)[1])
        m = re.fullmatch(r"port (\d+)\n", self.proc.stdout.readline().decode())
        if not m or self.proc.stdout.readline() != b"ready\n":
            fail("the leak server did not start")
        self.port = int(m.group(1))

    def command(self, text):
        try:
            self.proc.stdin.write(text.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.proc.wait(timeout=60)
            fail("the leak server is gone (status %d): %s" %
                 (self.proc.returncode, self.proc.stderr.read().decode()[-3000:]))
        return self.proc.stdout.readline().decode().strip()

    def get(self, path, timeout=60):
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def finish(self):
        # Not communicate(): it reads the pipe itself and loses what readline() buffered past
        # the port line (a line printed right after it).
        self.proc.stdin.close()
        err = self.proc.stderr.read()
        self.proc.stdout.read()
        self.proc.wait(timeout=60)
        if self.proc.returncode != 0:
            fail("leak server exited with %d: %s" % (self.proc.returncode, err.decode()[-2000:]))
        return err.decode()


def load(port, requests, clients, results, latencies):
    """`clients` threads send requests 0..requests-1 (k % clients = thread) one at a time."""

    def client(index):
        for k in range(index, requests, clients):
            start = time.time()
            for attempt in range(3):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=60)
                    s.sendall(b"%d\n" % k)
                    answer = b""
                    while not answer.endswith(b"\n"):
                        chunk = s.recv(256)
                        if not chunk:
                            break
                        answer += chunk
                    s.close()
                    results[k] = answer.decode()
                    break
                except OSError as e:
                    results[k] = "error %s" % e
            latencies[k] = time.time() - start
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    return threads


def leak_rows(args, text, workdir, name):
    """pprof-tool's flat objects and bytes per function of a leak profile (legacy text)."""
    path = os.path.join(workdir, name)
    with open(path, "wb") as f:
        f.write(text)
    objects, _ = pprof_tool_leaf_values(args.pprof_tool, path, "--inuse_objects")
    space, report = pprof_tool_leaf_values(args.pprof_tool, path, "--inuse_space")
    return objects, space, report


def leak_check_when_admitted(server, path="/debug/pprof/leaks?debug=1"):
    """A live check, asked again after each 429's Retry-After (at most five times)."""
    for _ in range(5):
        status, body, headers = get_with_headers(server.url + path)
        if status != 429:
            return status, body
        time.sleep(int(headers["Retry-After"]))
    return status, body


def get_with_headers(url, timeout=60):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


def admission(args):
    """The live check's admission (heapcheck/live_leak_check.h): too soon after the last check
    -> 429 with Retry-After and the last check's time and totals; HEAP_CHECK_LIVE_MIN_INTERVAL_MS
    sets the least interval; a bad value is one line and the default (1 s); /metrics counts.
    The spacing is max(interval, 19 x the last check's duration): the expectations below take
    the duration from the 429's line, so that a slow check on a loaded machine fails nothing."""
    too_soon = re.compile(r"too soon after the last leak check \(ended \d{4}-\d\d-\d\dT"
                          r"\d\d:\d\d:\d\dZ, ([\d.]+) s, threads stopped [\d.]+ s, 0 bytes "
                          r"leaked in 0 objects\); the next may start in ([\d.]+) s\n")

    def check(p, want, what):
        """A live check; returns the time its answer came and, for a 429, the spacing it
        implies (max(interval, 19 x duration)) and how long until the next may start."""
        status, body, headers = get_with_headers(p.url + "/debug/pprof/leaks?debug=1")
        answered = time.time()
        if status != want:
            fail("%s: %d %r (wanted %d)" % (what, status, body[:200], want))
        if want != 429:
            return answered, None, None
        m = too_soon.fullmatch(body.decode())
        if not m:
            fail("%s: the 429's line: %r" % (what, body))
        retry = headers.get("Retry-After")
        left = float(m.group(2))
        if retry is None or retry != str(max(1, math.ceil(left))):
            fail("%s: Retry-After %r, the line says %.3f s" % (what, retry, left))
        return answered, float(m.group(1)), left

    def spacing_kept(p, interval, what):
        """200, then at once 429 saying the next may start within max(interval, 19 x d) of the
        first's end, then 429 still just before that, then 200 just after. Returns the 429s."""
        first, _, _ = check(p, 200, what + ": the first check")
        asked = time.time()
        _, duration, left = check(p, 429, what + ": at once after it")
        spacing = max(interval, 19 * duration)
        if not spacing - (time.time() - first) - 0.05 <= left <= spacing + 0.001:
            fail("%s: the next check in %.3f s; the spacing is %.3f s, %.3f s after the first"
                 % (what, left, spacing, asked - first))
        refused = 1
        if spacing > 1.0:
            time.sleep(max(0, first + spacing - 0.6 - time.time()))
            check(p, 429, what + ": 0.6 s before the spacing ends")
            refused += 1
        time.sleep(max(0, first + spacing + 0.3 - time.time()))
        check(p, 200, what + ": 0.3 s after the spacing ends")
        return refused

    # The default: at least 1 s between live checks (these take milliseconds here).
    p = LeakServer(args, {"HEAPCHECK": "normal"})
    refused = spacing_kept(p, 1.0, "default interval")
    status, metrics = p.get("/metrics")
    for series, want in (("heapkit_leak_checks_total", 2),
                         ("heapkit_leak_checks_refused_too_soon_total", refused),
                         ("heapkit_leak_checks_refused_busy_total", 0)):
        m = re.search(rb"^%s (\S+)$" % series.encode(), metrics, re.M)
        if not m or float(m.group(1)) != want:
            fail("%s %r, wanted %d" % (series, m and m.group(1), want))
    m = re.search(rb"^heapkit_leak_check_pause_seconds (\S+)$", metrics, re.M)
    if not m or not 0 < float(m.group(1)) < 1:
        fail("heapkit_leak_check_pause_seconds %r" % (m and m.group(1)))
    p.finish()

    # The interval set: 2.5 s (429 still at 1.9 s, 200 at 2.8 s).
    p = LeakServer(args, {"HEAPCHECK": "normal", "HEAP_CHECK_LIVE_MIN_INTERVAL_MS": "2500"})
    spacing_kept(p, 2.5, "2.5 s interval")
    p.finish()

    # A bad value: one line, and the default.
    p = LeakServer(args, {"HEAPCHECK": "normal", "HEAP_CHECK_LIVE_MIN_INTERVAL_MS": "soon"})
    spacing_kept(p, 1.0, "bad interval")
    err = p.finish()
    lines = [l for l in (p.early_stderr + err).splitlines() if "HEAP_CHECK_LIVE_MIN_INTERVAL_MS" in l]
    if lines != ["heapkit: ignoring HEAP_CHECK_LIVE_MIN_INTERVAL_MS='soon': not an integer; "
                 "using default 1000"]:
        fail("a bad HEAP_CHECK_LIVE_MIN_INTERVAL_MS: %r" % lines)
    print("admission: 429 with Retry-After and the last check's line; interval 1 s by default, "
          "2.5 s when set; a bad value one line")


def leaks(args):
    requests, clients, planted = 20000, 4, 60
    # The reference run: no HEAPCHECK, no check; the same requests and the same planted leak.
    ref = LeakServer(args)
    ref_results, ref_latencies = {}, {}
    threads = load(ref.port, requests, clients, ref_results, ref_latencies)
    time.sleep(0.3)
    ref.command("leak %d" % planted)
    for t in threads:
        t.join()
    if ref.get("/debug/pprof/leaks")[0] != 503:
        fail("/debug/pprof/leaks answered without HEAPCHECK")
    ref.finish()

    # The spacing's floor off: checks as often as its 5 % share of the time allows.
    p = LeakServer(args, {"HEAPCHECK": "normal", "HEAP_CHECK_LIVE_MIN_INTERVAL_MS": "0"})
    status, before = p.get("/debug/pprof/leaks?debug=1")
    if status != 200 or not before.startswith(b"heap profile:"):
        fail("leaks before the plant: %d %r" % (status, before[:200]))
    if b"0x" in before.split(b"MAPPED_LIBRARIES:")[0].split(b"\n", 1)[1]:
        objects, _, report = leak_rows(args, before, args.workdir, "before.heap")
        if objects.get("LeakInRequest"):
            fail("LeakInRequest reported before any was planted:\n" + report)
    results, latencies = {}, {}
    threads = load(p.port, requests, clients, results, latencies)
    time.sleep(0.3)
    if not p.command("leak %d" % planted).startswith("leaking"):
        fail("the leak server did not take the command")
    during = []
    check_times = []
    while any(t.is_alive() for t in threads):
        start = time.time()
        status, body = p.get("/debug/pprof/leaks?debug=1")
        check_times.append(time.time() - start)
        if status == 200:
            during.append(body)
        elif status != 429:  # too soon after the last check: the spacing
            fail("leak check during load: %d %r" % (status, body[:200]))
        time.sleep(0.2)
    for t in threads:
        t.join()
    status, after = leak_check_when_admitted(p)
    if status != 200:
        fail("leak check after the load: %d" % status)
    objects, space, report = leak_rows(args, after, args.workdir, "after.heap")
    found = objects.get("LeakInRequest", 0)
    print("leaks: %d checks during load (slowest %.3f s); after: LeakInRequest %d objects, %d bytes"
          % (len(during), max(check_times or [0]), found, space.get("LeakInRequest", 0)))
    # A worker's registers or a stale stack slot may still hold its last leaked pointer: at
    # most one per worker (four) is seen as reachable.
    # pprof-tool rounds bytes to three digits: the header's exact totals (every leak is
    # LeakInRequest's, checked below) must be found objects of 3000 bytes.
    header = re.match(rb"heap profile:\s*(\d+):\s*(\d+) ", after)
    if not planted - 4 <= found <= planted or not header or \
            (int(header.group(1)), int(header.group(2))) != (found, found * 3000):
        fail("LeakInRequest: %d objects (header %r); %d planted of 3000 bytes:\n%s"
             % (found, after[:80], planted, report))
    for function, value in objects.items():
        if function != "LeakInRequest" and value > 0:
            fail("a leak the program does not have: %s %d\n%s" % (function, value, report))
    # The spacing (19 x a check's duration, with the floor off) bounds how many run while the
    # load lasts: on a loaded machine a single one.
    if len(during) < 1:
        fail("no check ran during the load")
    # The proto answer: go tool pprof reads it (when go is installed).
    if shutil.which("go") is not None:
        for attempt in range(5):
            raw = subprocess.run(["go", "tool", "pprof", "-raw", p.url + "/debug/pprof/leaks"],
                                 capture_output=True, text=True, timeout=300,
                                 env=go_env(args.workdir))
            if raw.returncode == 0 or "429 Too Many Requests" not in raw.stderr:
                break
            # Too soon after the last check (the spacing): wait as long as it says, once more.
            status, _, headers = get_with_headers(p.url + "/debug/pprof/leaks")
            if status == 429:
                time.sleep(int(headers["Retry-After"]))
        if raw.returncode != 0:
            fail("go tool pprof -raw on /debug/pprof/leaks: " + raw.stderr)
        go_objects = raw_leaf_values(raw.stdout, 2)
        if sum(go_objects.values()) != found:
            fail("go tool pprof sees %d leaked objects, pprof-tool %d" % (sum(go_objects.values()), found))
    status, metrics = p.get("/metrics")
    m = re.search(rb"^heapkit_leaked_bytes (\S+)$", metrics, re.M)
    if not m or float(m.group(1)) != found * 3000:
        fail("heapkit_leaked_bytes %r, the last check found %d" % (m and m.group(1), found * 3000))
    p.finish()
    # Every request answered, and answered as without the check.
    lost = [k for k in range(requests) if not results.get(k, "").endswith("\n")]
    if lost:
        fail("%d requests lost, e.g. %r" % (len(lost), [(k, results.get(k)) for k in lost[:3]]))
    differ = [k for k in range(requests) if results[k] != ref_results.get(k)]
    if differ:
        fail("%d answers differ from the run without the check, e.g. k=%d: %r vs %r"
             % (len(differ), differ[0], results[differ[0]], ref_results.get(differ[0])))
    print("leaks: %d requests answered identically; slowest request %.3f s (%.3f s without "
          "checks)" % (requests, max(latencies.values()), max(ref_latencies.values())))


def leaks_serving(args):
    """While a live check's copy floods, the server's one thread answers other clients: the
    check stops the program only for the fork, and the endpoint only for as long."""
    p = LeakServer(args, {"HEAPCHECK": "normal", "HEAP_CHECK_LIVE_MIN_INTERVAL_MS": "0"})
    # A heap the copy needs a while to flood (pointers to every object in one vector).
    if not p.command("keep 1000000 256").startswith("kept"):
        fail("the leak server did not take the command")
    p.command("leak 1")
    done = {}

    def check():
        start = time.time()
        done["status"], done["body"] = p.get("/debug/pprof/leaks?debug=1", timeout=600)
        done["seconds"] = time.time() - start
        done["at"] = time.time()

    checker = threading.Thread(target=check)
    checker.start()
    time.sleep(0.05)
    answered, slowest = [], 0.0
    while checker.is_alive():
        start = time.time()
        status, cmdline = p.get("/debug/pprof/cmdline")
        if status != 200 or os.path.basename(args.leak_server).encode() not in cmdline:
            fail("/debug/pprof/cmdline during a live check: %d %r" % (status, cmdline[:200]))
        slowest = max(slowest, time.time() - start)
        answered.append(time.time())
    checker.join()
    if done.get("status") != 200 or not done["body"].startswith(b"heap profile:"):
        fail("the live check: %r %r" % (done.get("status"), done.get("body", b"")[:200]))
    before = [t for t in answered if t < done["at"]]
    status, metrics = p.get("/metrics")
    m = re.search(rb"^heapkit_leak_check_pause_seconds (\S+)$", metrics, re.M)
    print("leaks_serving: a live check took %.3f s; /debug/pprof/cmdline answered %d times meanwhile "
          "(slowest %.3f s); pause %s s" % (done["seconds"], len(before), slowest,
                                           m.group(1).decode() if m else "?"))
    # Served in the same thread as the check, one request at a time: had the check held the
    # thread, at most the request already waiting could have been answered before the check's.
    if len(before) < 3:
        fail("only %d answers while the live check ran for %.3f s: the server waited "
             "for the check" % (len(before), done["seconds"]))
    p.finish()


def function_values(args, text, option, name):
    path = os.path.join(args.workdir, name)
    with open(path, "wb") as f:
        f.write(text)
    values, _ = pprof_tool_leaf_values(args.pprof_tool, path, option)
    return values


def raw_values(args, url_or_file, index):
    raw = subprocess.run(["go", "tool", "pprof", "-raw", url_or_file], capture_output=True,
                         text=True, timeout=300, env=go_env(args.workdir))
    if raw.returncode != 0:
        fail("go tool pprof -raw %s: %s" % (url_or_file, raw.stderr))
    return raw_leaf_values(raw.stdout, index)


def delta(args):
    p = LeakServer(args)
    def save(path, name):
        status, body = p.get(path)
        if status != 200:
            fail("%s: %d" % (path, status))
        out = os.path.join(args.workdir, name)
        with open(out, "wb") as f:
            f.write(body)
        return out
    save("/debug/pprof/delta_heap", "d0.pb.gz")
    a = save("/debug/pprof/allocs", "a.pb.gz")
    p.command("churn 20000 4096")
    p.command("keep 2000 8192")
    b = save("/debug/pprof/allocs", "b.pb.gz")
    d1 = save("/debug/pprof/delta_heap", "d1.pb.gz")
    d2 = save("/debug/pprof/delta_heap", "d2.pb.gz")
    p.finish()
    checked = 0
    for index, name in ((0, "alloc_objects"), (1, "alloc_space"), (3, "inuse_space")):
        va, vb, v1, v2 = (raw_values(args, f, index) for f in (a, b, d1, d2))
        for function in ("DeltaChurn", "DeltaKeep"):
            if index == 3:
                want = vb.get(function, 0)  # absolute
            else:
                want = vb.get(function, 0) - va.get(function, 0)
            got = v1.get(function, 0)
            print("delta %s %s: delta_heap %d, snapshots %d" % (name, function, got, want))
            if (want <= 0 and (index < 3 or function == "DeltaKeep")) or abs(got - want) > 2:
                fail("delta_heap %s %s: %d, the snapshots' difference %d" % (name, function, got, want))
            if index < 3 and v2.get(function, 0) != 0:
                fail("second delta_heap %s %s: %d, nothing allocated since" % (name, function, v2.get(function)))
            if index == 3 and v2.get(function, 0) != want:
                fail("second delta_heap in use %s: %d, want %d" % (function, v2.get(function, 0), want))
            checked += 1
    print("delta: %d values agree" % checked)


def gperftools(args):
    p = Program(args)
    status, heap = p.get("/pprof/heap")
    status2, debug_text = p.get("/debug/pprof/heap?debug=1")
    # The same records (the maps that follow may differ: the server maps memory as it works).
    records = lambda text: text.split(b"MAPPED_LIBRARIES:")[0]
    if status != 200 or records(heap) != records(debug_text) or not heap.startswith(b"heap profile:"):
        fail("/pprof/heap: %d, %r" % (status, heap[:100]))
    status, growth = p.get("/pprof/growth")
    if status != 200 or not growth.startswith(b"heap profile:") or b"@ growthz" not in growth.split(b"\n")[0]:
        fail("/pprof/growth: %d %r" % (status, growth[:100]))
    values = function_values(args, growth, "--inuse_space", "growth.heap")
    if values.get("KeepLarge", 0) < 32 * 2**20:
        fail("/pprof/growth: KeepLarge %r" % values.get("KeepLarge"))
    status, cmdline = p.get("/pprof/cmdline")
    if status != 200 or cmdline.decode().split("\n")[0] != args.program:
        fail("/pprof/cmdline: %d %r" % (status, cmdline))
    status, symbols = p.get("/pprof/symbol")
    if status != 200 or symbols != b"num_symbols: 1\n":
        fail("/pprof/symbol GET: %d %r" % (status, symbols))
    # Return addresses of the heap profile's stacks, and nm's address of KeepSmall.
    nm = subprocess.run(["nm", "-C", args.program], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) t .*KeepSmall\(\)$", nm, re.M)
    with open("/proc/%d/maps" % p.proc.pid) as f:
        base = min(int(l.split("-")[0], 16) for l in f if l.rstrip().endswith(args.program))
    keep_small = base + int(m.group(1), 16) + 4 if m else None
    addresses = ["0x%x" % keep_small, "0x1"]
    request = urllib.request.Request(p.url + "/pprof/symbol", data="+".join(addresses).encode(),
                                     method="POST")
    with urllib.request.urlopen(request, timeout=30) as r:
        answer = r.read().decode()
    lines = answer.splitlines()
    if len(lines) != 1 or not re.fullmatch(r"0x0*%x\t.*KeepSmall.*" % keep_small, lines[0]):
        fail("/pprof/symbol POST %s: %r" % (addresses, answer))
    bad = urllib.request.Request(p.url + "/pprof/symbol", data=b"0xzz", method="POST")
    try:
        urllib.request.urlopen(bad, timeout=30)
        fail("/pprof/symbol accepted 0xzz")
    except urllib.error.HTTPError as e:
        if e.code != 400:
            fail("/pprof/symbol 0xzz: %d" % e.code)
    p.finish()
    print("gperftools: /pprof/heap, growth, cmdline and symbol answer as gperftools' pprof expects")


def stripped(args):
    if shutil.which("go") is None:
        print("SKIP: go is not installed")
        sys.exit(77)
    work = args.workdir
    for old in ("binaries", "debug"):  # a previous run's
        shutil.rmtree(os.path.join(work, old), ignore_errors=True)
    binary = os.path.join(work, "workload")
    subprocess.run(["strip", "--strip-all", "-o", binary, args.program], check=True)
    bid = build_id(args.program)
    if not bid or build_id(binary) != bid:
        fail("strip changed or lost the build ID")
    unstripped_args = argparse.Namespace(**vars(args))
    unstripped_args.program = binary
    p = Program(unstripped_args)
    status, profile = p.get("/debug/pprof/heap")
    p.finish()
    if status != 200:
        fail("/debug/pprof/heap: %d" % status)
    fetched = os.path.join(work, "heap.pb.gz")
    with open(fetched, "wb") as f:
        f.write(profile)
    wanted = ("KeepSmall", "KeepLarge")
    alone, report = pprof_tool_leaf_values(args.pprof_tool, fetched, "--inuse_space")
    if any(w in report for w in wanted):
        fail("the stripped binary's profile names its functions without the binary:\n" + report)
    # The unstripped binary as the program argument, then as a build-id debug file.
    debug_dir = os.path.join(work, "debug")
    by_id = os.path.join(debug_dir, ".build-id", bid[:2])
    os.makedirs(by_id, exist_ok=True)
    shutil.copy(args.program, os.path.join(by_id, bid[2:] + ".debug"))
    for how, command in (
            ("binary argument", [args.pprof_tool, "--text", "--inuse_space", "--nodecount=20",
                                 "--nodefraction=0", args.program, fetched]),
            ("--symbol_path", [args.pprof_tool, "--text", "--inuse_space", "--nodecount=20",
                               "--nodefraction=0", "--symbol_path=" + debug_dir, fetched])):
        out = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if out.returncode != 0 or not all(w in out.stdout for w in wanted):
            fail("pprof-tool with the %s does not name %s:\n%s%s" % (how, wanted, out.stdout,
                                                                       out.stderr))
    # pprof (Google's, built from Debian's source of it: `go tool pprof` never reads a local
    # file's build ID, so it cannot use a file for a mapping that has one): PPROF_BINARY_PATH
    # holds a file of the mapping's base name with its build ID.
    pprof = os.path.join(work, "pprof")
    built = subprocess.run(["go", "build", "-o", pprof, "."], cwd=GOPATH + "/src/github.com/google/pprof",
                           capture_output=True, text=True, timeout=600, env=go_env(work))
    if built.returncode != 0:
        fail("cannot build pprof from %s: %s" % (GOPATH, built.stderr[-2000:]))
    binaries = os.path.join(work, "binaries")
    os.makedirs(binaries, exist_ok=True)
    def raw_locations():
        raw = subprocess.run([pprof, "-raw", fetched], capture_output=True, text=True,
                             timeout=300, env=dict(go_env(work), PPROF_BINARY_PATH=binaries))
        if raw.returncode != 0:
            fail("pprof -raw: " + raw.stderr[-2000:])
        return raw.stdout.split("Locations", 1)[-1].split("Mappings", 1)[0]
    if any(w in raw_locations() for w in wanted):
        fail("pprof names the stripped binary's functions without the binary")
    shutil.copy(args.program, os.path.join(binaries, os.path.basename(binary)))
    locations = raw_locations()
    named = [w for w in wanted if w in locations]
    if named != list(wanted):
        fail("pprof with PPROF_BINARY_PATH names %s:\n%s" % (named, locations[-3000:]))
    print("stripped: named later by pprof-tool (binary, --symbol_path) and pprof: %s" % named)


def fleet_mode(args):
    import signal
    statuses = {}
    for mode in ("local", "normal"):
        p = LeakServer(args, {"HEAPCHECK": mode})
        results, latencies = {}, {}
        if not p.command("leak 5").startswith("leaking"):
            fail("the leak server did not take the command")
        for t in load(p.port, 20, 2, results, latencies):
            t.join()
        status, body = p.get("/debug/pprof/leaks?debug=1")
        if status != 200:
            fail("HEAPCHECK=%s: /debug/pprof/leaks: %d %r" % (mode, status, body[:200]))
        objects, _, report = leak_rows(args, body, args.workdir, "fleet_%s.heap" % mode)
        if objects.get("LeakInRequest") != 5:
            fail("HEAPCHECK=%s: the live check found %r LeakInRequest objects, not 5:\n%s"
                 % (mode, objects.get("LeakInRequest"), report))
        p.proc.send_signal(signal.SIGTERM)
        try:
            p.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.proc.kill()
            fail("HEAPCHECK=%s: SIGTERM did not stop the service" % mode)
        err = p.proc.stderr.read().decode()
        statuses[mode] = p.proc.returncode
        reported = "Exiting with error code" in err
        if mode == "local" and (p.proc.returncode != 0 or reported):
            fail("HEAPCHECK=local: SIGTERM ended the service with status %d:\n%s"
                 % (p.proc.returncode, err[-3000:]))
        if mode == "normal" and (p.proc.returncode != 1 or not reported):
            fail("HEAPCHECK=normal: status %d without the exit check's line (the trap the "
                 "fleet mode avoids is gone?):\n%s" % (p.proc.returncode, err[-3000:]))
    print("fleet_mode: the live check finds the leak in both modes; SIGTERM: local %d, normal %d"
          % (statuses["local"], statuses["normal"]))


def server_thread(pid):
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() == "heapkit-http":
                return int(tid)
    fail("no heapkit-http thread in %d" % pid)


def thread_cpu_ns(pid, tid):
    with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
        return int(f.read().split()[0])


def thread_read_calls(pid, tid):
    """The read-type system calls the thread has made (task I/O accounting): a count that the
    machine's load does not change."""
    with open("/proc/%d/task/%d/io" % (pid, tid)) as f:
        return int(re.search(r"^syscr: (\d+)", f.read(), re.M).group(1))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))


def code_ranges(pid):
    ranges = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and "x" in fields[1] and fields[5].startswith("/"):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                ranges.append((start, end))
    return ranges


def post_symbols(p, addresses):
    body = "+".join("0x%x" % a for a in addresses).encode()
    request = urllib.request.Request(p.url + "/pprof/symbol", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=60) as r:
        return r.status, r.headers, r.read().decode(), len(body)


def symbol_cost(args):
    import random
    p = Program(args, extra_args=["mappings", "1000"])
    pid = p.proc.pid
    with open("/proc/%d/maps" % pid) as f:
        lines = sum(1 for _ in f)
    if lines < 2000:
        fail("the workload has %d mappings, not 2,000" % lines)
    ranges = code_ranges(pid)
    rng = random.Random(7)
    def code_addresses(n):
        out = set()
        while len(out) < n:
            start, end = rng.choice(ranges)
            out.add(rng.randrange(start, end))
        return sorted(out)
    tid = server_thread(pid)
    # Warm: the first lookup in each module builds its index (a one-time cost per module).
    post_symbols(p, code_addresses(4000))
    addresses = code_addresses(4300)
    before, reads_before = thread_cpu_ns(pid, tid), thread_read_calls(pid, tid)
    status, headers, answer, size = post_symbols(p, addresses)
    cpu_ms = (thread_cpu_ns(pid, tid) - before) / 1e6
    reads = thread_read_calls(pid, tid) - reads_before
    named = len(answer.splitlines())
    print("symbol_cost: %d mappings, %d B request (%d addresses): %.1f ms of the server "
          "thread's CPU, %d read calls, %d named" % (lines, size, len(addresses), cpu_ms, reads,
                                                     named))
    if status != 200 or size < 60000:
        fail("the request was not answered: %d %r" % (status, headers.items()))
    truncated = headers.get("X-Heapkit-Symbols-Truncated")
    if truncated:
        # The server's CPU budget (250 ms, routes.cc) ran out: on this machine that takes a
        # thread slowed over tenfold by other work; the answer must then say how far it got.
        looked_up = re.match(r"(\d+) of %d addresses looked up$" % len(addresses), truncated)
        if not looked_up or int(looked_up.group(1)) >= len(addresses):
            fail("truncated answer with a wrong header: %r" % truncated)
        print("symbol_cost: the CPU budget cut the answer short (%s) after %.1f ms" %
              (truncated, cpu_ms))
    if named == 0:
        fail("no address named")
    # The cost's shape, counted rather than timed: one read of /proc/self/maps per request
    # (about 40 read calls for 2,000 mappings) and the request's own socket reads: 55 in all.
    # Reading the maps once per address instead costs ~55 calls an address
    # (21,120 for the 383 addresses such a build looked up within its CPU budget).
    if reads > 400:
        fail("a 64 KiB request made %d read calls (at most 400: one read of the maps)" % reads)
    # Distinct addresses, a quarter of them code, the rest in no module: the symbolizer keeps
    # none of them. What it does keep grows with the code they land in (libdw's state of each
    # compile unit looked into, each module's index: bounded by the loaded modules' debug
    # info), so that is warmed first, with as many code addresses as are measured below.
    for request in range(60):
        post_symbols(p, code_addresses(1000))
    rss_before = rss_kib(pid)
    base = rng.randrange(1 << 40, 1 << 44)
    for request in range(60):  # 4,000 addresses fill a request (at most 64 KiB)
        batch = [base + (request * 4000 + i) * 64 for i in range(4000)]
        batch[::4] = code_addresses(1000)
        post_symbols(p, batch)
    grown = (rss_kib(pid) - rss_before) / 1024
    print("symbol_cost: 240,000 distinct addresses grew RSS by %.1f MiB" % grown)
    if grown > 8:
        fail("240,000 distinct addresses grew RSS by %.1f MiB (at most 8)" % grown)
    p.finish()


def heap_totals(p):
    status, text = p.get("/debug/pprof/heap?debug=1")
    header = text.split(b"\n", 1)[0].decode()
    return header


def storm(args):
    p = Program(args)
    before = heap_totals(p)
    start = time.time()
    for i in range(60):
        for path in ("/debug/pprof/heap", "/debug/pprof/allocs", "/metrics",
                     "/debug/pprof/growth", "/debug/pprof/delta_heap", "/pprof/heap"):
            status, body = p.get(path)
            if status != 200:
                fail("%s: %d" % (path, status))
    after = heap_totals(p)
    p.finish()
    print("storm: 360 scrapes in %.1f s; before %r, after %r" % (time.time() - start, before, after))
    if before != after:
        fail("the scrapes changed the profile: %r -> %r" % (before, after))


def growth_server(args):
    """The heap growths of the endpoint's own thread stay out of /debug/pprof/growth, as its
    allocations stay out of the heap profile: after a storm of symbolizing scrapes and symbol
    lookups (the idle workload allocates nothing meanwhile) the heap has grown, the growth
    profile has not, and it holds no frame of the endpoint or of libdw."""
    import random
    p = Program(args, extra_args=["mappings", "1000"])
    ranges = code_ranges(p.proc.pid)
    rng = random.Random(11)

    def growth_bytes():
        status, text = p.get("/pprof/growth")
        m = re.match(rb"heap profile: *\d+: *(\d+) ", text)
        if status != 200 or not m:
            fail("/pprof/growth: %d %r" % (status, text[:100]))
        return int(m.group(1))

    def reserved():
        return metric(p.get("/metrics")[1], "heapkit_heap_reserved_bytes")

    grown_before, reserved_before = growth_bytes(), reserved()
    for i in range(40):
        for path in ("/debug/pprof/heap", "/debug/pprof/allocs", "/debug/pprof/growth"):
            status, _ = p.get(path)
            if status != 200:
                fail("%s: %d" % (path, status))
        addresses = set()
        while len(addresses) < 1000:
            start, end = rng.choice(ranges)
            addresses.add(rng.randrange(start, end))
        post_symbols(p, sorted(addresses))
    grown_after, reserved_after = growth_bytes(), reserved()
    status, proto = p.get("/debug/pprof/growth")
    path = os.path.join(args.workdir, "growth.pb.gz")
    with open(path, "wb") as f:
        f.write(proto)
    traces = subprocess.run([args.pprof_tool, "--traces", path], capture_output=True, text=True,
                            timeout=300)
    p.finish()
    print("growth_server: the heap reserved %+.1f MiB during the storm, the growth profile "
          "%+.1f MiB (%d B in all)" % ((reserved_after - reserved_before) / 2**20,
                                       (grown_after - grown_before) / 2**20, grown_after))
    if traces.returncode != 0 or "-----------" not in traces.stdout:
        fail("pprof-tool --traces on the growth profile: %s" % traces.stderr)
    if reserved_after <= reserved_before:
        fail("the storm did not grow the heap (%d -> %d B): this check shows nothing"
             % (reserved_before, reserved_after))
    if grown_after != grown_before:
        fail("the server thread's growths are in the growth profile: %d -> %d B"
             % (grown_before, grown_after))
    server = re.compile(r"heapkit::prof::http|ModuleIndex|Symboliz|\bdw(fl|arf)_|libdw|libelf")
    frames = sorted({line.strip() for line in traces.stdout.splitlines() if server.search(line)})
    if frames:
        fail("the growth profile holds the endpoint's frames: %s" % frames[:5])


def attack(args):
    import threading
    p = Program(args, extra_args=["busy"])
    host, port = "127.0.0.1", int(p.url.rsplit(":", 1)[1])
    stop = threading.Event()
    attackers = []
    opened = [0]
    def slowloris():
        socks = []
        while not stop.is_set():
            opened[0] = len(socks)
            try:
                s = socket.create_connection((host, port), timeout=2)
                s.sendall(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
                socks.append(s)
            except OSError:
                pass
            for s in socks[-50:]:
                try:
                    s.send(b"a")
                except OSError:
                    pass
            if len(socks) > 400:
                for s in socks[:200]:
                    s.close()
                socks = socks[200:]
            time.sleep(0.01)
        for s in socks:
            s.close()
    t = threading.Thread(target=slowloris)
    t.start()
    attackers.append(t)
    # The slow clients fill the server's 64 slots first.
    while opened[0] < 150:
        time.sleep(0.05)
    # The 10,000-connection loop in a process of its own (no GIL shared with the scraper).
    loop = subprocess.Popen([sys.executable, "-c", (
        "import socket, sys\n"
        "n = 0\n"
        "for i in range(10000):\n"
        "    try:\n"
        "        socket.create_connection(('%s', %d), timeout=2).close(); n += 1\n"
        "    except OSError:\n"
        "        pass\n"
        "print(n)\n") % (host, port)], stdout=subprocess.PIPE, text=True)
    slowest = 0.0
    answered = 0
    deadline = time.time() + 120
    while time.time() < deadline and (loop.poll() is None or answered < 3):
        start = time.time()
        status, body = p.get("/metrics", timeout=10)
        took = time.time() - start
        if status != 200 or b"heapkit_heap_inuse_bytes" not in body:
            fail("scrape during the attack: %d" % status)
        slowest = max(slowest, took)
        answered += 1
        time.sleep(0.05)
    stop.set()
    for t in attackers:
        t.join()
    connects = int(loop.communicate(timeout=120)[0])
    out, err = p.finish()
    print("attack: %d of 10000 connects accepted, %d scrapes answered during them, slowest %.3f s"
          % (connects, answered, slowest))
    if answered < 3:
        fail("only %d scrapes during the attack" % answered)
    # Without eviction a full table of slow clients locks scrapers out for the 5 s request
    # deadline; 1 s leaves room for a loaded machine.
    if slowest > 1.0:
        fail("a scrape took %.3f s during the attack" % slowest)


def api(args):
    env = dict(os.environ)
    env.pop("HEAPKIT_HTTP", None)
    env.pop("LD_PRELOAD", None)
    proc = subprocess.Popen([args.api_server, "127.0.0.1:0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    bound = proc.stdout.readline().decode()
    second = proc.stdout.readline().decode()
    ready = proc.stdout.readline().decode()
    m = re.fullmatch(r"bound 127\.0\.0\.1:(\d+)\n", bound)
    if not m or ready != "ready\n":
        fail("HeapkitStartHttpServer: %r %r %r" % (bound, second, ready))
    if not second.startswith("second 0 the heapkit HTTP server already listens on 127.0.0.1:"):
        fail("a second start: %r" % second)
    url = "http://127.0.0.1:" + m.group(1)
    with urllib.request.urlopen(url + "/debug/pprof/heap?debug=1", timeout=30) as r:
        text = r.read()
    path = os.path.join(args.workdir, "api.heap")
    with open(path, "wb") as f:
        f.write(text)
    values, report = pprof_tool_leaf_values(args.pprof_tool, path, "--inuse_space")
    _, err = proc.communicate(b"", timeout=60)
    # The start line is printed for a server started from code too.
    if not START_LINE.match(err.decode()) or \
            START_LINE.match(err.decode()).group(1) != "127.0.0.1:" + m.group(1):
        fail("no start line naming the bound address: %r" % err.decode()[:300])
    if not 4 * 2**20 <= values.get("KeepFromApi", 0) <= 12 * 2**20:
        fail("KeepFromApi in use %r, it holds 8 MiB:\n%s" % (values.get("KeepFromApi"), report))
    print("api: the server started from code profiles the program (KeepFromApi %d)" %
          values["KeepFromApi"])


def raw_request(address, path, headers=(), method="GET", body=b"", timeout=30):
    """One request with exactly these headers (no Host unless given): (status, body).
    `address` is (host, port) or a Unix socket's path."""
    if isinstance(address, str):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(address)
    else:
        s = socket.create_connection(address, timeout=timeout)
    head = "%s %s HTTP/1.1\r\n" % (method, path)
    for name, value in headers:
        head += "%s: %s\r\n" % (name, value)
    if body:
        head += "Content-Length: %d\r\n" % len(body)
    s.sendall(head.encode() + b"\r\n" + body)
    answer = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
    s.close()
    status_line, _, rest = answer.partition(b"\r\n")
    m = re.match(rb"HTTP/1\.1 (\d+) ", status_line)
    if not m:
        return 0, answer
    return int(m.group(1)), rest.partition(b"\r\n\r\n")[2]


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def request_as_nobody(address, path, headers=()):
    """raw_request from a process that dropped to nobody before it connected."""
    code = ("import sys, json\nsys.path.insert(0, %r)\nimport run_http\n"
            "status, body = run_http.raw_request(%r, %r, %r)\n"
            "print(json.dumps([status, body.decode('utf-8', 'replace')]))\n"
            % (os.path.dirname(os.path.abspath(__file__)), address, path, list(headers)))
    import json
    r = subprocess.run([NOBODY_PYTHON, "-c", code], capture_output=True, text=True, timeout=60,
                       preexec_fn=as_nobody, cwd="/")
    if r.returncode != 0:
        fail("the client running as nobody failed: %s" % r.stderr[-2000:])
    status, body = json.loads(r.stdout)
    return status, body


# Every path the index and routes.cc serve (the parameters each takes).
ALL_PATHS = ["/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/heap?debug=1",
             "/debug/pprof/allocs", "/debug/pprof/allocs?debug=1", "/debug/pprof/delta_heap",
             "/debug/pprof/growth", "/debug/pprof/growth?debug=1", "/debug/pprof/leaks",
             "/debug/pprof/leaks?debug=1", "/debug/pprof/cmdline", "/metrics", "/pprof/heap",
             "/pprof/growth", "/pprof/cmdline", "/pprof/symbol", "/nonexistent"]


def metric(body, name):
    m = re.search(rb"^" + re.escape(name.encode()) + rb" (\S+)$", body, re.M)
    return float(m.group(1)) if m else None


def origin(args):
    p = LeakServer(args, {"HEAPCHECK": "normal"})
    port = p.http_port
    address = ("127.0.0.1", port)
    ours = "127.0.0.1:%d" % port
    # One check of our own: the count the hostile requests must leave as it is.
    status, _ = raw_request(address, "/debug/pprof/leaks?debug=1", [("Host", ours)])
    if status != 200:
        fail("a same-origin leak check: %d" % status)
    _, metrics = raw_request(address, "/metrics", [("Host", ours)])
    checks = metric(metrics, "heapkit_leak_checks_total")
    # Every link of the index is among the paths checked (a new endpoint must join the list).
    _, index = raw_request(address, "/debug/pprof/", [("Host", ours)])
    linked = {urllib.parse.urljoin("/debug/pprof/", href)
              for href in re.findall(r'href="([^"]+)"', index.decode())}
    if not linked or not linked <= set(ALL_PATHS):
        fail("index links not checked here: %s" % sorted(linked - set(ALL_PATHS)))
    rebinding = ["rebind.test:%d" % port, "127.0.0.1.evil.example:%d" % port,
                 "localhost:%d.evil.example" % port, "127.0.0.1:%d" % (port + 1), "127.0.0.1",
                 "evil.example"]
    cross = [[("Origin", "http://evil.example")], [("Origin", "null")],
             [("Origin", "http://127.0.0.1:%d" % (port + 1))],
             [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")]]
    refused = 0
    for path in ALL_PATHS:
        for host in rebinding:
            status, body = raw_request(address, path, [("Host", host)])
            if status != 421 or body.count(b"\n") != 1 or b"Host" not in body:
                fail("%s with Host %s: %d %r" % (path, host, status, body[:200]))
            refused += 1
        # No Host at all: not this server's name either.
        status, body = raw_request(address, path)
        if status != 421:
            fail("%s without Host: %d %r" % (path, status, body[:200]))
        refused += 1
        for headers in cross:
            status, body = raw_request(address, path, [("Host", ours)] + headers)
            if status != 403 or body.count(b"\n") != 1:
                fail("%s with %s: %d %r" % (path, headers, status, body[:200]))
            refused += 1
    # A form of another site posting to the symbol lookup.
    status, body = raw_request(address, "/pprof/symbol", [("Host", ours),
                                                          ("Origin", "http://evil.example")],
                               method="POST", body=b"0x1")
    if status != 403:
        fail("a cross-origin POST /pprof/symbol: %d %r" % (status, body[:200]))
    refused += 1
    # Browsers without Fetch Metadata: a foreign Referer on the endpoints that act.
    for path in ("/debug/pprof/leaks", "/debug/pprof/leaks?debug=1", "/debug/pprof/delta_heap"):
        status, body = raw_request(address, path, [("Host", ours),
                                                   ("Referer", "http://evil.example/page")])
        if status != 403 or b"Referer" not in body:
            fail("%s with a foreign Referer: %d %r" % (path, status, body[:200]))
        refused += 1
    # What a same-origin browser sends is answered.
    for headers in ([("Host", "localhost:%d" % port), ("Sec-Fetch-Site", "same-origin"),
                     ("Referer", "http://localhost:%d/debug/pprof/" % port)],
                    [("Host", ours), ("Origin", "http://" + ours), ("Sec-Fetch-Site", "none")]):
        status, body = raw_request(address, "/debug/pprof/heap?debug=1", headers)
        if status != 200:
            fail("same-origin %s: %d %r" % (headers, status, body[:200]))
    status, metrics = raw_request(address, "/metrics", [("Host", ours)])
    after = metric(metrics, "heapkit_leak_checks_total")
    counted = sum(metric(metrics, 'heapkit_http_refused_requests_total{reason="%s"}' % r) or 0
                  for r in ("host", "cross_site"))
    p.finish()
    if after != checks:
        fail("leak checks went from %r to %r: a refused request ran one" % (checks, after))
    if counted != refused:
        fail("/metrics counts %r refusals, %d were made" % (counted, refused))
    print("origin: %d requests over %d paths refused and counted; leak checks stay %d"
          % (refused, len(ALL_PATHS), checks))


def browser(args):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("SKIP: chromium missing")
        sys.exit(77)
    import http.server
    import threading
    p = LeakServer(args, {"HEAPCHECK": "normal"})
    port = p.http_port
    ours = "127.0.0.1:%d" % port
    profile = os.path.join(args.workdir, "chromium-profile")
    shutil.rmtree(profile, ignore_errors=True)

    def run_chromium(url, extra=()):
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", "--user-data-dir=" + profile,
                            "--virtual-time-budget=3000", "--timeout=10000", *extra,
                            "--dump-dom", url], capture_output=True, text=True, timeout=120)
        return r.stdout
    # 1. DNS rebinding: the page's name resolves to 127.0.0.1.
    dom = run_chromium("http://rebind.test:%d/debug/pprof/cmdline" % port,
                       ["--host-resolver-rules=MAP rebind.test 127.0.0.1"])
    if "is not this server's address" not in dom or args.leak_server in dom:
        fail("chromium on a rebound name got %r" % dom[:500])
    # The same browser on the real address reads it (the test can see a success).
    dom = run_chromium("http://%s/debug/pprof/cmdline" % ours)
    if os.path.basename(args.leak_server) not in dom:
        fail("chromium on the endpoint's own address got %r" % dom[:500])
    _, metrics = raw_request(("127.0.0.1", port), "/metrics", [("Host", ours)])
    before = metric(metrics, "heapkit_leak_checks_total") or 0
    # 2. A page of another origin embeds the leak check.
    page = ("<html><body><img src=\"http://%s/debug/pprof/leaks\">"
            "<img src=\"http://%s/debug/pprof/leaks?debug=1\" referrerpolicy=\"no-referrer\">"
            "<p>loaded</p></body></html>" % (ours, ours)).encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *a):
            pass
    other = http.server.HTTPServer(("127.0.0.2", 0), Page)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    dom = run_chromium("http://evil.test:%d/" % other.server_address[1],
                       ["--host-resolver-rules=MAP evil.test 127.0.0.2"])
    other.shutdown()
    if "loaded" not in dom:
        fail("the foreign page did not load: %r" % dom[:500])
    _, metrics = raw_request(("127.0.0.1", port), "/metrics", [("Host", ours)])
    after = metric(metrics, "heapkit_leak_checks_total") or 0
    cross = metric(metrics, 'heapkit_http_refused_requests_total{reason="cross_site"}') or 0
    p.finish()
    if after != before:
        fail("a foreign page's <img> ran %d leak checks" % (after - before))
    if cross < 2:
        fail("the foreign page's two requests were not refused as cross-site (%r)" % cross)
    print("browser: rebound name refused, foreign <img> refused (%d), no leak check" % cross)


def write_token(path, token, owner=0, mode=0o600):
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chown(path, owner, owner)
    os.chmod(path, mode)


def start_failure(args, env_extra, address="127.0.0.1:0"):
    """The one stderr line of a workload whose endpoint must stay off."""
    env = dict(os.environ, HEAPKIT_HTTP=address, LD_PRELOAD=args.preload)
    env.update(env_extra)
    r = subprocess.run([args.program], input=b"", capture_output=True, env=env, timeout=60)
    lines = r.stderr.decode().splitlines()
    if r.returncode != 0 or len(lines) != 1 or not lines[0].endswith("the HTTP endpoint is off"):
        fail("%s %s: expected one line and the endpoint off, got rc %d %r"
             % (address, env_extra, r.returncode, lines))
    return lines[0]


def uid(args):
    token = "t0ken-" + os.urandom(16).hex()
    token_file = os.path.join(args.workdir, "token")
    write_token(token_file, token)
    ours = lambda p: [("Host", "127.0.0.1:%d" % p.port)]
    # The default rule: the service's uid and root.
    p = Program(args)
    address = ("127.0.0.1", p.port)
    status, body = raw_request(address, "/debug/pprof/cmdline", ours(p))
    if status != 200:
        fail("the service's own uid: %d %r" % (status, body))
    for path in ("/debug/pprof/cmdline", "/pprof/heap", "/metrics"):
        status, body = request_as_nobody(address, path, ours(p))
        if status != 403 or "uid %d" % NOBODY not in body or body.count("\n") != 1:
            fail("nobody read %s: %d %r" % (path, status, body))
    _, metrics = raw_request(address, "/metrics", ours(p))
    if metric(metrics, 'heapkit_http_refused_requests_total{reason="uid"}') != 3:
        fail("uid refusals not counted: %r" % metrics[-600:])
    p.finish()
    # An allow-list by name, and the token.
    p = Program(args, env_extra={"HEAPKIT_HTTP_ALLOW_USERS": "nobody",
                                 "HEAPKIT_HTTP_TOKEN_FILE": token_file})
    m = START_LINE.fullmatch(p.start_line)
    if "uid %d" % NOBODY not in m.group(2) or m.group(3) != token_file:
        fail("the start line does not name the rule: %r" % p.start_line)
    address = ("127.0.0.1", p.port)
    status, body = request_as_nobody(address, "/debug/pprof/cmdline", ours(p))
    if status != 200 or args.program not in body:
        fail("an allowed user: %d %r" % (status, body[:200]))
    p.finish()
    p = Program(args, env_extra={"HEAPKIT_HTTP_TOKEN_FILE": token_file})
    address = ("127.0.0.1", p.port)
    status, body = request_as_nobody(address, "/metrics",
                                     ours(p) + [("Authorization", "Bearer " + token)])
    if status != 200 or "heapkit_heap_inuse_bytes" not in body:
        fail("nobody with the token: %d %r" % (status, body[:200]))
    for wrong in ("Bearer " + token[:-1] + "x", "Bearer " + token + "x", "Basic " + token):
        status, body = request_as_nobody(address, "/metrics", ours(p) + [("Authorization", wrong)])
        if status != 403:
            fail("nobody with %r: %d" % (wrong, status))
    # A wrong token is refused whoever sends it.
    status, _ = raw_request(address, "/metrics", ours(p) + [("Authorization", "Bearer wrong")])
    if status != 403:
        fail("root with a wrong token: %d" % status)
    p.finish()
    # Token files that must keep the endpoint off.
    bad = os.path.join(args.workdir, "token-bad")
    link = os.path.join(args.workdir, "token-link")
    cases = []
    write_token(bad, token, mode=0o640)
    cases.append(("group-readable", bad, "group or others"))
    write_token(bad + "2", token, owner=NOBODY)
    cases.append(("owned by nobody", bad + "2", "owned by uid"))
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(token_file, link)
    cases.append(("a symbolic link", link, "symbolic link"))
    write_token(bad + "3", "short")
    cases.append(("too short", bad + "3", "16 to 4096"))
    cases.append(("missing", os.path.join(args.workdir, "absent"), "No such file"))
    for what, path, words in cases:
        line = start_failure(args, {"HEAPKIT_HTTP_TOKEN_FILE": path})
        if words not in line:
            fail("token file %s: %r" % (what, line))
    line = start_failure(args, {"HEAPKIT_HTTP_ALLOW_USERS": "no-such-user-here"})
    # Reachable from other hosts: needs the token or HEAPKIT_HTTP_ALLOW_REMOTE.
    line = start_failure(args, {}, address="0.0.0.0:0")
    if "other hosts" not in line:
        fail("0.0.0.0 without a token: %r" % line)
    env = dict(os.environ, HEAPKIT_HTTP="0.0.0.0:0", LD_PRELOAD=args.preload,
               HEAPKIT_HTTP_ALLOW_REMOTE="1")
    proc = subprocess.Popen([args.program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    m = START_LINE.fullmatch(proc.stderr.readline().decode())
    proc.stdout.readline()
    if not m or m.group(4) != "any client":
        fail("0.0.0.0 with HEAPKIT_HTTP_ALLOW_REMOTE: %r" % (m and m.group(0)))
    port = int(m.group(1).rsplit(":", 1)[1])
    # A connection from this host still gets the uid rule.
    status, _ = request_as_nobody(("127.0.0.1", port), "/metrics", [("Host", "x:%d" % port)])
    proc.communicate(b"", timeout=60)
    if status != 403:
        fail("nobody on loopback to a 0.0.0.0 bind: %d" % status)
    print("uid: nobody refused; allowed by name and by token; wrong tokens and bad files refused")


def prometheus_token(args):
    import json
    import tempfile
    if shutil.which("prometheus") is None:
        print("SKIP: prometheus missing")
        sys.exit(77)
    token = "prom-" + os.urandom(16).hex()
    # Prometheus runs as nobody: its files in a directory of its own.
    home = tempfile.mkdtemp(prefix="heapkit-prometheus-")
    os.chmod(home, 0o755)
    service_token = os.path.join(args.workdir, "service-token")
    write_token(service_token, token)
    scraper_token = os.path.join(home, "token")
    write_token(scraper_token, token, owner=NOBODY)
    p = Program(args, env_extra={"HEAPKIT_HTTP_TOKEN_FILE": service_token})
    target = p.url[len("http://"):]
    config = os.path.join(home, "prometheus.yml")
    with open(config, "w") as f:
        f.write("scrape_configs:\n"
                "  - job_name: with_token\n"
                "    scrape_interval: 1s\n"
                "    authorization:\n"
                "      credentials_file: %s\n"
                "    static_configs:\n"
                "      - targets: [\"%s\"]\n"
                "  - job_name: without\n"
                "    scrape_interval: 1s\n"
                "    static_configs:\n"
                "      - targets: [\"%s\"]\n" % (scraper_token, target, target))
    data = os.path.join(home, "data")
    os.makedirs(data)
    os.chown(data, NOBODY, NOBODY)
    api = "127.0.0.1:%d" % free_port()
    log = open(os.path.join(args.workdir, "prometheus.log"), "w")
    server = subprocess.Popen(["prometheus", "--config.file=" + config,
                               "--storage.tsdb.path=" + data, "--web.listen-address=" + api],
                              stdout=log, stderr=log, preexec_fn=as_nobody, cwd=home)
    try:
        def query(expression):
            return prometheus_query(api, expression)
        deadline = time.time() + 120
        while time.time() < deadline:
            if (query('count_over_time(up{job="with_token"}[1m])') or 0) >= 3 and \
                    (query('count_over_time(up{job="without"}[1m])') or 0) >= 3 and \
                    query('heapkit_heap_inuse_bytes{job="with_token"}') is not None:
                break
            time.sleep(1)
        up_token, up_without = query('up{job="with_token"}'), query('up{job="without"}')
        inuse = query('heapkit_heap_inuse_bytes{job="with_token"}')
        leaked = query('heapkit_heap_inuse_bytes{job="without"}')
        if up_token != 1 or up_without != 0:
            fail("up with the token %r, without %r: %s" % (up_token, up_without,
                                                          open(log.name).read()[-2000:]))
        if inuse is None or not 96 * 2**20 <= inuse <= 160 * 2**20 or leaked is not None:
            fail("heapkit_heap_inuse_bytes: with the token %r, without %r" % (inuse, leaked))
        status, body = p.get("/metrics")
        refused = metric(body, 'heapkit_http_refused_requests_total{reason="uid"}')
        if not refused:
            fail("the refused scrapes are not counted: %r" % refused)
        print("prometheus_token: as nobody, up %g with credentials_file (in use %g), up %g "
              "without (%g refusals counted)" % (up_token, inuse, up_without, refused))
    finally:
        server.terminate()
        server.wait(timeout=30)
        p.finish()
        shutil.rmtree(home, ignore_errors=True)


def unix(args):
    import stat
    import tempfile
    directory = tempfile.mkdtemp(prefix="heapkit-unix-")
    os.chmod(directory, 0o755)
    path = os.path.join(directory, "endpoint.sock")
    env = dict(os.environ, HEAPKIT_HTTP="unix:" + path, LD_PRELOAD=args.preload)
    env.pop("TCMALLOC_SAMPLE_PARAMETER", None)

    def start():
        proc = subprocess.Popen([args.program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        line = proc.stderr.readline().decode()
        m = START_LINE.fullmatch(line)
        if not m or m.group(1) != "unix:" + path or proc.stdout.readline() != b"ready\n":
            fail("unix socket start line: %r" % line)
        return proc
    try:
        proc = start()
        st = os.lstat(path)
        if not stat.S_ISSOCK(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o600:
            fail("the socket's mode is %o" % st.st_mode)
        status, body = raw_request(path, "/metrics", [("Host", "localhost")])
        if status != 200 or b"heapkit_heap_inuse_bytes" not in body:
            fail("same uid over the unix socket: %d %r" % (status, body[:200]))
        # nobody: the mode keeps it out; with the mode opened, SO_PEERCRED does.
        code = ("import socket\ns = socket.socket(socket.AF_UNIX)\n"
                "try:\n    s.connect(%r)\n    print('connected')\n"
                "except PermissionError:\n    print('denied')\n" % path)
        r = subprocess.run([NOBODY_PYTHON, "-c", code], capture_output=True, text=True,
                           preexec_fn=as_nobody, timeout=60)
        if r.stdout.strip() != "denied":
            fail("nobody connecting to the 0600 socket: %r %r" % (r.stdout, r.stderr))
        os.chmod(path, 0o666)
        status, body = request_as_nobody(path, "/debug/pprof/cmdline", [("Host", "localhost")])
        if status != 403 or "uid %d" % NOBODY not in body:
            fail("nobody over an opened unix socket: %d %r" % (status, body))
        proc.communicate(b"", timeout=60)
        # A stale socket of ours (nobody listens on it) is replaced.
        proc = start()
        proc.communicate(b"", timeout=60)
        # A link, a foreign file, a socket in use: refused, nothing touched.
        os.unlink(path)
        target = os.path.join(directory, "target")
        with open(target, "w") as f:
            f.write("keep me\n")
        os.symlink(target, path)
        line = start_failure(args, {}, address="unix:" + path)
        if "symbolic link" not in line or open(target).read() != "keep me\n":
            fail("a symlink at the path: %r" % line)
        os.unlink(path)
        with open(path, "w") as f:
            f.write("someone's file\n")
        line = start_failure(args, {}, address="unix:" + path)
        if "did not create" not in line or open(path).read() != "someone's file\n":
            fail("a regular file at the path: %r" % line)
        os.unlink(path)
        other = socket.socket(socket.AF_UNIX)
        other.bind(path)
        os.chown(path, NOBODY, NOBODY)
        line = start_failure(args, {}, address="unix:" + path)
        other.close()
        if "uid %d" % NOBODY not in line or not os.path.exists(path):
            fail("nobody's socket at the path: %r" % line)
        os.unlink(path)
        listening = socket.socket(socket.AF_UNIX)
        listening.bind(path)
        listening.listen()
        line = start_failure(args, {}, address="unix:" + path)
        listening.close()
        if "in use" not in line:
            fail("a live socket at the path: %r" % line)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print("unix: mode 0600, same uid answered, nobody refused, links and foreign files refused")


def thread_cpu_ticks(pid, name):
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != name:
                    continue
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])  # utime + stime
        except OSError:
            continue
    fail("no thread named %s" % name)


def emfile(args):
    p = Program(args)
    pid = p.proc.pid
    # The lowest free descriptor number becomes the limit: every new descriptor fails (EMFILE).
    used = {int(fd) for fd in os.listdir("/proc/%d/fd" % pid)}
    lowest_free = next(n for n in range(len(used) + 1) if n not in used)
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (lowest_free, hard))
    try:
        for i in range(3):
            s = socket.create_connection(("127.0.0.1", p.port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            s.close()
        time.sleep(0.5)
        before = thread_cpu_ticks(pid, "heapkit-http")
        time.sleep(2)
        after = thread_cpu_ticks(pid, "heapkit-http")
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    ticks = os.sysconf("SC_CLK_TCK")
    # Spinning on poll/accept4 burns the whole 2 s; idle is 0 or a tick of rounding.
    if after - before > ticks // 10:
        fail("the server thread used %d ticks (of %d/s) in 2 s out of descriptors"
             % (after - before, ticks))
    status, body = p.get("/metrics", timeout=10)
    p.finish()
    if status != 200:
        fail("no /metrics once descriptors are back: %d" % status)
    print("emfile: the server thread used %d ticks in 2 s with the process out of descriptors"
          % (after - before))


def ports(args):
    for address in ("127.0.0.1:+0", "127.0.0.1:-0", ": 0", ":+6060", ":0x10", ":", ":123456",
                    ":65536", "127.0.0.1:0 ", ":6060abc"):
        line = start_failure(args, {}, address=address)
        if "bad port" not in line:
            fail("%r: %r" % (address, line))
    for address in (":00", ":0", "127.0.0.1:000"):
        env = dict(os.environ, HEAPKIT_HTTP=address, LD_PRELOAD=args.preload)
        proc = subprocess.Popen([args.program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        m = START_LINE.fullmatch(proc.stderr.readline().decode())
        proc.communicate(b"", timeout=60)
        if not m or not re.fullmatch(r"127\.0\.0\.1:[1-9]\d*", m.group(1)):
            fail("%r: the start line does not name the port: %r" % (address, m and m.group(0)))
    print("ports: bad forms refused with one line; :0, :00 and :000 name the port they got")


def smaps_rss(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        return int(re.search(r"^Rss:\s+(\d+) kB", f.read(), re.M).group(1)) * 1024


def metrics_rss(args):
    if shutil.which("promtool") is None:
        print("SKIP: promtool (Debian's prometheus package) missing")
        sys.exit(77)
    p = Program(args)
    status, _ = p.get("/debug/pprof/heap")  # the symbolizer built: /metrics must not count it
    if status != 200:
        fail("/debug/pprof/heap: %d" % status)
    status, body = p.get("/metrics")
    rss = smaps_rss(p.proc.pid)
    with open("/proc/%d/stat" % p.proc.pid) as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as f:
        boot = int(re.search(r"^btime (\d+)", f.read(), re.M).group(1))
    p.finish()
    if status != 200:
        fail("/metrics: %d" % status)
    checked = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True)
    if checked.returncode != 0:
        fail("promtool check metrics: %s%s" % (checked.stdout.decode(), checked.stderr.decode()))
    parts = {m.group(1).decode(): float(m.group(2)) for m in re.finditer(
        rb'^heapkit_resident_memory_bytes\{part="([a-z_]+)"\} (\S+)$', body, re.M)}
    if not parts:
        fail("/metrics has no heapkit_resident_memory_bytes:\n" + body.decode())
    total = sum(parts.values())
    print("metrics_rss: %d parts add up to %.1f MiB, smaps_rollup RSS %.1f MiB, "
          "process_resident_memory_bytes %.1f MiB" % (len(parts), total / 2**20, rss / 2**20,
                                                     metric(body, "process_resident_memory_bytes")
                                                     / 2**20))
    if abs(total - rss) > 0.05 * rss:
        fail("the resident parts add up to %d, RSS is %d: %r" % (total, rss, parts))
    if abs(metric(body, "process_resident_memory_bytes") - rss) > 0.05 * rss:
        fail("process_resident_memory_bytes %g, RSS %d" % (
            metric(body, "process_resident_memory_bytes"), rss))
    resident = metric(body, "heapkit_metadata_resident_bytes")
    reserved = metric(body, "heapkit_metadata_reserved_bytes")
    if resident is None or reserved is None or not 0 < resident <= reserved:
        fail("metadata resident %r, reserved %r" % (resident, reserved))
    if metric(body, "heapkit_metadata_bytes") is not None:
        fail("heapkit_metadata_bytes (reserved address space under a resident name) is back")
    if abs(resident - parts["metadata_page_map"] - parts["metadata_arena"]) > 1:
        fail("heapkit_metadata_resident_bytes is not the metadata parts' sum")
    info = re.search(rb'^heapkit_build_info\{version="(\d+\.\d+\.\d+)",build_id="([0-9a-f]*)"\} 1$',
                     body, re.M)
    if not info or info.group(2) != build_id(os.path.realpath(args.preload)).encode():
        fail("heapkit_build_info with the version and libheapkit's build ID missing:\n" +
             body.decode())
    started = metric(body, "process_start_time_seconds")
    expected = boot + ticks / os.sysconf("SC_CLK_TCK")
    if started is None or abs(started - expected) > 1:
        fail("process_start_time_seconds %r, /proc says %.2f" % (started, expected))
    for name in ("heapkit_sample_period_bytes", "heapkit_endpoint_heap_bytes"):
        if metric(body, name) is None:
            fail("/metrics lacks " + name)
    if metric(body, "heapkit_endpoint_heap_bytes") > 1 << 20:
        fail("the endpoint keeps %g bytes between answers" % metric(body,
                                                                  "heapkit_endpoint_heap_bytes"))


# What a symbolized fetch may leave behind (profiler/README.md, "The endpoint's own memory"):
# the symbolizer is dropped after kSymbolizerIdleMs; what stays is the code pages of libdw
# and the on-demand library it ran (file-backed, clean; ~0.7 MiB) and a few spans' worth of
# small objects.
FETCH_BOUND_MIB = 2
SYMBOLIZER_IDLE_S = 1.0


def fetch_memory(args):
    work = args.workdir
    stripped_copy = os.path.join(work, "workload-stripped")
    subprocess.run(["strip", "--strip-all", "-o", stripped_copy, args.program], check=True)
    for name, program in (("stripped", stripped_copy), ("-g", args.program)):
        program_args = argparse.Namespace(**vars(args))
        program_args.program = program
        p = Program(program_args)
        pid = p.proc.pid

        def settled():
            time.sleep(SYMBOLIZER_IDLE_S + 0.5)  # the idle symbolizer is dropped meanwhile
            rss = smaps_rss(pid)
            status, body = p.get("/metrics")
            if status != 200:
                fail("/metrics: %d" % status)
            return rss, metric(body, "heapkit_heap_inuse_bytes")

        p.get("/metrics")  # the answer's own first-time costs (thread cache, buffers)
        figures = [("before", settled())]
        for fetches in (1, 99):
            for _ in range(fetches):
                status, profile = p.get("/debug/pprof/heap")
                if status != 200:
                    fail("/debug/pprof/heap: %d" % status)
            figures.append(("after %d" % (1 if fetches == 1 else 100), settled()))
        p.finish()
        if name == "-g" and b"KeepSmall" not in gzip.decompress(profile):
            fail("the -g build's profile does not name KeepSmall")
        (_, (rss0, inuse0)) = figures[0]
        print("fetch_memory %s: " % name + ", ".join(
            "%s RSS %.2f MiB heap_inuse %.2f MiB" % (tag, rss / 2**20, inuse / 2**20)
            for tag, (rss, inuse) in figures))
        for tag, (rss, inuse) in figures[1:]:
            if rss - rss0 > FETCH_BOUND_MIB << 20 or abs(inuse - inuse0) > FETCH_BOUND_MIB << 20:
                fail("%s, %s: RSS %+.2f MiB, heap_inuse %+.2f MiB (bound %d MiB)" % (
                    name, tag, (rss - rss0) / 2**20, (inuse - inuse0) / 2**20, FETCH_BOUND_MIB))


def memory_view(args):
    prefix = os.path.join(args.workdir, "dump")
    for old in os.listdir(args.workdir):
        if old.startswith("dump."):
            os.remove(os.path.join(args.workdir, old))
    p = Program(args, env_extra={"HEAPPROFILE": prefix, "HEAP_PROFILE_TIME_INTERVAL": "1"})
    status, _ = p.get("/debug/pprof/heap")
    if status != 200:
        fail("/debug/pprof/heap: %d" % status)
    status, body = p.get("/metrics")
    held = metric(body, "heapkit_endpoint_heap_bytes")
    time.sleep(2.5)  # a dump every second: the last ones come after the server told its bytes
    p.finish()
    dumps = sorted(f for f in os.listdir(args.workdir) if re.fullmatch(r"dump\.\d+\.heap", f))
    if not dumps:
        fail("no HEAPPROFILE dump")
    dump = os.path.join(args.workdir, dumps[-1])
    with open(dump, "rb") as f:
        m = re.search(rb"^# heapkit: memory heapkit_endpoint (\d+)$", f.read(), re.M)
    if not m or int(m.group(1)) == 0 or int(m.group(1)) != held:
        fail("the dump's heapkit_endpoint line: %r, /metrics said %r" % (m and m.group(0), held))
    out = subprocess.run([args.pprof_tool, "--memory", dump], capture_output=True, text=True,
                         timeout=120)
    row = [l.strip() for l in out.stdout.splitlines() if "HTTP endpoint" in l]
    print("memory_view: heapkit_endpoint %s bytes; %s" % (m.group(1).decode(), row))
    if out.returncode != 0 or not row:
        fail("pprof-tool --memory has no endpoint row:\n" + out.stdout + out.stderr)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["go_client", "oracle", "hostile", "secure", "prometheus",
                                      "leaks", "admission", "fleet_mode", "delta", "gperftools",
                                      "stripped",
                                      "symbol_cost", "storm", "growth_server", "attack", "api",
                                      "origin", "browser", "uid", "prometheus_token", "unix",
                                      "emfile", "ports", "metrics_rss", "fetch_memory",
                                      "memory_view", "leaks_serving"])
    ap.add_argument("--leak-server", dest="leak_server")
    ap.add_argument("--api-server", dest="api_server")
    ap.add_argument("--program", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--pprof-tool", dest="pprof_tool")
    ap.add_argument("--go-test-dir", dest="go_test_dir")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    args.program = os.path.realpath(args.program)
    os.makedirs(args.workdir, exist_ok=True)
    if args.check in ("go_client", "oracle", "delta") and (
            shutil.which("go") is None or
            not os.path.isdir(GOPATH + "/src/github.com/google/pprof/profile")):
        print("skipped: go or golang-github-google-pprof-dev missing")
        sys.exit(77)
    if args.check in ("uid", "prometheus_token", "unix") and os.geteuid() != 0:
        print("SKIP: a client running as nobody needs root")
        sys.exit(77)
    globals()[args.check](args)
    print("PASS")


if __name__ == "__main__":
    main()
