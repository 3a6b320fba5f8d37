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
Exit 77 (skipped) when go, go pprof's sources or prometheus are missing.
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

GOPATH = "/usr/share/gocode"


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
        m = re.fullmatch(r"heapkit: HTTP endpoint listening on 127\.0\.0\.1:(\d+)\n", line)
        if not m:
            fail("expected the port line, got %r" % line)
        self.url = "http://127.0.0.1:" + m.group(1)
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
            m = re.match(r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+):\s+([\d ]+)$", line)
            if m:
                samples.append((int(m.group(1 + index)), m.group(5).split()))
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
    if not codes <= {b"400", b"404", b"405", b""}:
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
    if r.returncode != 0 or lines != ["heapkit: HEAPKIT_HTTP: bad port; the HTTP endpoint is off"]:
        fail("bad port: rc %d, %r" % (r.returncode, lines))
    # Not a numeric address: refused, never resolved.
    env["HEAPKIT_HTTP"] = "example.com:80"
    r = subprocess.run([args.program], input=b"", capture_output=True, env=env, timeout=60)
    if r.returncode != 0 or len(r.stderr.decode().splitlines()) != 1:
        fail("host name: %r" % r.stderr)
    print("secure: bad addresses give one line")


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
            url = "http://%s/api/v1/query?query=%s" % (api, urllib.parse.quote(expression))
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    result = json.load(r)["data"]["result"]
            except (OSError, ValueError, KeyError):
                return None
            return float(result[0]["value"][1]) if result else None
        deadline = time.time() + 120
        values = {}
        names = ["heapkit_heap_inuse_bytes", "heapkit_heap_mapped_bytes",
                 "heapkit_metadata_bytes", "process_resident_memory_bytes",
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["go_client", "oracle", "hostile", "secure", "prometheus"])
    ap.add_argument("--program", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--pprof-tool", dest="pprof_tool")
    ap.add_argument("--go-test-dir", dest="go_test_dir")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    args.program = os.path.realpath(args.program)
    os.makedirs(args.workdir, exist_ok=True)
    if args.check in ("go_client", "oracle") and (
            shutil.which("go") is None or
            not os.path.isdir(GOPATH + "/src/github.com/google/pprof/profile")):
        print("skipped: go or golang-github-google-pprof-dev missing")
        sys.exit(77)
    globals()[args.check](args)
    print("PASS")


if __name__ == "__main__":
    main()
