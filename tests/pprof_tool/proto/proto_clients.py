#!/usr/bin/env python3
"""pprof-tool's profile.proto, checked by clients no one here wrote.

  proto_clients.py <args> go_pprof    `go tool pprof -top/-traces` on every --proto export shows
                                      the functions and values of `pprof-tool --text/--traces`
                                      on the legacy file (inuse and alloc, inline frames,
                                      --heapcheck; -raw: Function.start_line; a stripped
                                      binary's unnamed addresses one row each); go pprof's
                                      own address-only conversion
                                      of the legacy file reads like the legacy file
  proto_clients.py <args> roundtrip   legacy -> --proto -> report == legacy -> report
  proto_clients.py <args> variance    a heapkit dump with recorded variances -> --proto: go
                                      pprof -raw shows the four *_variance types and, per
                                      stack, the sum of its records' lines; pprof-tool reads
                                      back the same intervals, "recorded"
  proto_clients.py <args> decoder     Python protobuf (same schema, protoc --python_out):
                                      ids unique, references valid, string_table[0] == "",
                                      Function.start_line = the golden program's definition
                                      lines (an inlined function's too)
  proto_clients.py <args> go_program  a Go program's runtime/pprof.WriteHeapProfile output:
                                      pprof-tool --text names the Go function that allocates
  proto_clients.py <args> jemalloc    Debian's libjemalloc2 (prof:true) dumps: same totals and
                                      functions as jeprof; sampled dumps un-sampled like jeprof
  proto_clients.py <args> hostile     bad protobuf/gzip files: one line, exit 2, bounded memory

Profiles are made at test time: the golden test programs under Debian's libtcmalloc
(HEAPPROFILE; exact), plus a heap_v2 variant of the same file (un-sampling). Exit 77: a tool
the check needs is missing (said in one line).
"""
import argparse
import glob
import gzip
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import zlib

TIMEOUT = 120
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import fail, failures  # noqa: E402


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def run(cmd, env=None, check=True, limit_as=None):
    full = dict(os.environ)
    full.pop("DEBUGINFOD_URLS", None)
    full.update(env or {})
    pre = None
    if limit_as:
        pre = lambda: resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    p = subprocess.run(cmd, env=full, capture_output=True, timeout=TIMEOUT, preexec_fn=pre)
    if check and p.returncode != 0:
        raise SystemExit("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                         p.stderr.decode(errors="replace")))
    return p


def pprof(*args, **kw):
    return run([A.pprof_tool] + list(args), **kw)


def legacy_profiles():
    """[(program, legacy profile path)]: exact heapprofile of pie and nopie, heap_v2 of pie."""
    os.makedirs(A.work, exist_ok=True)
    out = []
    for kind, prog in [("pie", A.pie), ("nopie", A.nopie)]:
        prefix = os.path.join(A.work, kind)
        for f in glob.glob(prefix + ".*.heap"):
            os.remove(f)
        run([prog], env={"LD_PRELOAD": A.tcmalloc, "HEAPPROFILE": prefix})
        dumps = sorted(glob.glob(prefix + ".*.heap"))
        if not dumps:
            raise SystemExit("no heap dump from " + prog)
        out.append((prog, dumps[-1]))
    text = open(out[0][1]).read()
    header, rest = text.split("\n", 1)
    v2 = os.path.join(A.work, "pie.v2.heap")
    with open(v2, "w") as f:
        f.write(header.split("@")[0] + "@ heap_v2/4096\n" + rest)
    out.append((A.pie, v2))
    return out


def export(prog, legacy, *extra, tag=""):
    path = legacy + tag + ".pb.gz"
    pprof("--proto", "-o", path, *extra, prog, legacy)
    return path


VALUES = ["inuse_space", "alloc_space", "inuse_objects", "alloc_objects"]


def simple(name):
    """go pprof drops C++ template arguments from names it shows."""
    prev = None
    while prev != name:
        prev, name = name, re.sub(r"<[^<>]*>", "", name)
    return name.replace(" (inline)", "").strip()


def number(text):
    m = re.match(r"^(-?[\d.]+)(B|)$", text)
    return float(m.group(1)) if m else None


def top_rows(text):
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(-?[\d.]+B?)\s+\S+%\s+\S+%\s+(-?[\d.]+B?)\s+\S+%\s+(.*)$", line)
        if m:
            rows[simple(m.group(3))] = (number(m.group(1)), number(m.group(2)))
    return rows


def traces(text):
    out = {}
    for block in re.split(r"-+\+-+\n", text)[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        m = re.match(r"^\s*(-?[\d.]+)B?\s+(.*)$", lines[0])
        if not m:
            continue
        stack = tuple([simple(m.group(2))] + [simple(l) for l in lines[1:]])
        if float(m.group(1)) != 0:  # go pprof also lists samples whose chosen value is 0
            out[stack] = out.get(stack, 0) + float(m.group(1))
    return out


def close(a, b):
    return abs(a - b) <= max(1.0, 1e-6 * abs(b))


def check_go_pprof():
    go = shutil.which("go")
    if not go:
        skip("go (golang-go) is not installed")
    env = {"HOME": A.work, "PPROF_TMPDIR": A.work, "GOCACHE": os.path.join(A.work, "gocache"),
           "GOFLAGS": "", "GOPROXY": "off"}
    for prog, legacy in legacy_profiles():
        pb = export(prog, legacy)
        for value in VALUES:
            ours = pprof("--text", "--show_bytes", "--nodefraction=0", "--sample_index=" + value,
                         prog, legacy).stdout.decode()
            theirs = run([go, "tool", "pprof", "-top", "-unit=B", "-nodefraction=0",
                          "-nodecount=100000", "-sample_index=" + value, pb], env=env).stdout.decode()
            ro, rt = top_rows(ours), top_rows(theirs)
            what = "%s %s" % (os.path.basename(legacy), value)
            if not ro:
                fail("%s: no rows in pprof-tool output:\n%s" % (what, ours))
            if set(ro) != set(rt):
                fail("%s: functions differ: pprof-tool only %s, go pprof only %s" %
                     (what, sorted(set(ro) - set(rt)), sorted(set(rt) - set(ro))))
            for name in set(ro) & set(rt):
                if not (close(ro[name][0], rt[name][0]) and close(ro[name][1], rt[name][1])):
                    fail("%s: %s flat/cum %s (pprof-tool) vs %s (go pprof)" %
                         (what, name, ro[name], rt[name]))
            if "InlineHelper" not in ro or "(inline)" not in theirs:
                fail("%s: the inline frame InlineHelper is missing:\n%s" % (what, theirs))
            to = traces(pprof("--traces", "--show_bytes", "--sample_index=" + value, prog,
                              legacy).stdout.decode())
            tt = traces(run([go, "tool", "pprof", "-traces", "-unit=B", "-sample_index=" + value,
                             pb], env=env).stdout.decode())
            if set(to) != set(tt) or any(not close(to[k], tt[k]) for k in to):
                fail("%s: -traces differ:\n pprof-tool %s\n go pprof %s" % (what, to, tt))
        # The other way: go pprof converts the legacy file to an address-only profile.proto
        # (-symbolize=none); pprof-tool symbolizes its mappings like the legacy file's.
        if not legacy.endswith(".v2.heap"):  # go's heap_v2 rule differs in rounding only
            addr_only = legacy + ".go-addresses.pb.gz"
            with open(addr_only, "wb") as f:
                f.write(run([go, "tool", "pprof", "-proto", "-symbolize=none",
                             os.path.realpath(prog), legacy], env=env).stdout)
            for r in [["--text"], ["--traces"], ["--text", "--lines"], ["--text", "--alloc_space"]]:
                want = pprof(*r, prog, legacy).stdout.decode()
                got = pprof(*r, addr_only).stdout.decode()
                with_prog = pprof(*r, prog, addr_only).stdout.decode()
                if want != got or want != with_prog:
                    fail("%s %s: go pprof's address-only conversion reads differently:\n%s\n%s"
                         % (os.path.basename(legacy), r, want, got))
        # go pprof -raw prints each Line's function with its start line ("s=N").
        raw = run([go, "tool", "pprof", "-raw", pb], env=env).stdout.decode()
        for arg in golden_start_lines():
            name, line = arg[len("--start-line="):].rsplit(":", 1)
            shown = set(re.findall(r"\s%s \S+:\d+ s=(\d+)" % re.escape(name), raw))
            if shown != {line}:
                fail("%s: go pprof -raw shows %s with start lines %s, expected %s" %
                     (os.path.basename(legacy), name, sorted(shown), line))
        # A leak-checker export (inuse_* only) reads the same in go pprof.
        hc = export(prog, legacy, "--heapcheck", tag=".heapcheck")
        ours = top_rows(pprof("--text", "--show_bytes", "--nodefraction=0", "--heapcheck", prog,
                              legacy).stdout.decode())
        theirs = top_rows(run([go, "tool", "pprof", "-top", "-unit=B", "-nodefraction=0", hc],
                              env=env).stdout.decode())
        if set(ours) != set(theirs) or any(not close(ours[k][1], theirs[k][1]) for k in ours):
            fail("%s --heapcheck export: %s vs go pprof %s" % (legacy, ours, theirs))
        print("go tool pprof agrees on %s" % os.path.basename(legacy))
    # A stripped binary: each address pprof-tool cannot name is a function of its own in the
    # export, so go pprof (which cannot name them either) shows pprof-tool's rows, not one
    # "[binary]" row for all of them.
    prog, legacy = legacy_profiles()[1]
    stripped = os.path.join(A.work, "stripped_prog")
    run(["strip", "-o", stripped, prog])
    pb = export(stripped, legacy, tag=".stripped")
    ours = top_rows(pprof("--text", "--show_bytes", "--nodefraction=0", stripped,
                          legacy).stdout.decode())
    theirs = top_rows(run([go, "tool", "pprof", "-top", "-unit=B", "-nodefraction=0",
                           "-symbolize=none", pb], env=env).stdout.decode())
    unnamed = [k for k in ours if "stripped_prog+0x" in k]
    if len(unnamed) < 3:
        fail("stripped binary: expected several unnamed rows from pprof-tool, got %s" % ours)
    if set(ours) != set(theirs) or any(not close(ours[k][0], theirs[k][0]) for k in ours):
        fail("stripped binary: go pprof rows %s, pprof-tool rows %s" % (theirs, ours))


def check_roundtrip():
    reports = [["--text"], ["--text", "--alloc_space"], ["--text", "--inuse_objects"],
               ["--text", "--alloc_objects"], ["--traces"], ["--text", "--lines"],
               ["--collapsed"], ["--text", "--focus=Phase1"], ["--text", "--show_bytes"]]
    for prog, legacy in legacy_profiles():
        pb = export(prog, legacy)
        for r in reports:
            want = pprof(*r, prog, legacy).stdout.decode()
            got = pprof(*r, pb).stdout.decode()
            if legacy.endswith(".v2.heap"):
                # Un-sampled estimates are fractional; profile.proto stores int64 values, so
                # each sample is rounded: rows agree within one unit per stack.
                ro, rg = top_rows(want), top_rows(got)
                if r[0] == "--text" and (set(ro) != set(rg) or any(
                        abs(ro[k][i] - rg[k][i]) > 8 for k in ro for i in (0, 1))):
                    fail("%s %s: rows differ beyond rounding:\n%s\n%s" % (legacy, r, want, got))
                continue
            if want != got:
                fail("%s %s: legacy and exported reports differ:\n--- legacy\n%s--- proto\n%s" %
                     (os.path.basename(legacy), " ".join(r), want, got))
        # Written with a filter: the export holds only what the filter keeps.
        focused = export(prog, legacy, "--focus=Phase2", tag=".focus")
        want = pprof("--text", "--focus=Phase2", prog, legacy).stdout.decode()
        got = pprof("--text", focused).stdout.decode()
        if legacy.endswith(".v2.heap"):
            # The header's 95 % interval (model/estimate.h) comes from each row's mean size: the
            # export has one row per stack where the legacy file had several, so it differs a
            # little (73.50 vs 73.57 kB); both must carry one.
            interval = re.compile(r" \(± \S+ at 95 %\)")
            if not (interval.search(want) and interval.search(got)):
                fail("--focus: a sampled profile's header without its interval:\n%s\n%s" %
                     (want, got))
            want, got = interval.sub("", want), interval.sub("", got)
        if want != got:
            fail("--focus applied before writing:\n%s\n%s" % (want, got))
        # Same input, same bytes.
        again = pprof("--proto", prog, legacy).stdout
        if again != open(pb, "rb").read():
            fail("%s: --proto output is not deterministic" % legacy)
        # --base before writing: a profile minus itself is empty.
        base = export(prog, legacy, "--base=" + legacy, tag=".base")
        rows = top_rows(pprof("--text", base).stdout.decode())
        if rows:
            fail("--base applied before writing: expected no rows, found %s" % rows)
        print("round trip ok: %s" % os.path.basename(legacy))
    # A sample type the export does not have: one line, exit 2.
    hc = export(A.pie, legacy_profiles()[0][1], "--heapcheck", tag=".heapcheck")
    p = pprof("--text", "--sample_index=alloc_space", hc, check=False)
    err = p.stderr.decode().strip().splitlines()
    if p.returncode != 2 or len(err) != 1 or "no sample type 'alloc_space'" not in err[0]:
        fail("missing sample type: exit %d, stderr %s" % (p.returncode, err))


VARIANCE_SCALE = 1000  # each record's variance line: this times its un-sampled values


def dump_with_variances(legacy, rate=4096):
    """The exact legacy file as a heapkit heap_v2 dump whose records carry variance lines, each
    VARIANCE_SCALE times the record's un-sampled values (so a stack's variance is known from its
    exported values, whatever records the export merged into it)."""
    import math
    text = open(legacy).read()
    header, rest = text.split("\n", 1)
    body, maps = rest.split("\nMAPPED_LIBRARIES:", 1)
    out = [header.split("@")[0] + "@ heap_v2/%d" % rate,
           "# heapkit: dump time: 1795718736.075 pid 4242"]
    for line in body.splitlines():
        m = re.match(r"^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@", line)
        if m:
            n = [int(g) for g in m.groups()]
            v = []
            for count, size in ((n[0], n[1]), (n[2], n[3])):
                scale = 1 / (1 - math.exp(-(size / count) / rate)) if count else 0
                v += [VARIANCE_SCALE * count * scale, VARIANCE_SCALE * size * scale]
            out.append("# heapkit: variance %.17g %.17g %.17g %.17g" % tuple(v))
        out.append(line)
    path = legacy + ".variance.heap"
    with open(path, "w") as f:
        f.write("\n".join(out) + "\nMAPPED_LIBRARIES:" + maps.rstrip("\n") +
                "\n# heapkit: end of dump\n")
    return path


def raw_samples(raw):
    """go pprof -raw: (the sample type names, [values of each sample])."""
    lines = raw.splitlines()
    start = lines.index("Samples:")
    types = [t.split("/")[0] for t in lines[start + 1].split()]
    samples = []
    for line in lines[start + 2:]:
        m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):", line)
        if m:
            samples.append([int(x) for x in m.group(1).split()])
        elif line and not line.startswith(" "):
            break
    return types, samples


def check_variance():
    go = shutil.which("go")
    if not go:
        skip("go (golang-go) is not installed")
    env = {"HOME": A.work, "PPROF_TMPDIR": A.work, "GOCACHE": os.path.join(A.work, "gocache"),
           "GOFLAGS": "", "GOPROXY": "off"}
    prog, legacy = legacy_profiles()[0]
    dump = dump_with_variances(legacy)
    pb = export(prog, dump)
    types, samples = raw_samples(run([go, "tool", "pprof", "-raw", pb], env=env).stdout.decode())
    want = ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]
    if types != want + [t + "_variance" for t in want]:
        fail("go pprof -raw sample types %s" % types)
        return
    if len(samples) < 3:
        fail("go pprof -raw: expected several samples, found %s" % samples)
    for s in samples:  # per stack: the sum of its records' lines, each rounded once
        for value, variance in zip(s[:4], s[4:]):
            if abs(variance - VARIANCE_SCALE * value) > VARIANCE_SCALE:
                fail("stack with values %s: variance %d, expected %d (+- %d)" %
                     (s[:4], variance, VARIANCE_SCALE * value, VARIANCE_SCALE))
    for value in VALUES:
        interval = re.compile(r"\(± (\S+) at 95 %\)")
        a = pprof("--text", "--error_bars", "--sample_index=" + value, prog, dump).stdout.decode()
        b = pprof("--text", "--error_bars", "--sample_index=" + value, pb).stdout.decode()
        ia, ib = interval.search(a), interval.search(b)
        if not (ia and ib and ia.group(1) == ib.group(1)):
            fail("%s: intervals differ:\n--- legacy\n%s--- proto\n%s" % (value, a, b))
        if "recorded" not in a or "recorded" not in b:
            fail("%s: the note does not say the variances were recorded:\n%s\n%s" % (value, a, b))
    # A file without variance lines (the exact golden dump as heap_v2) gets none in its export.
    plain = legacy_profiles()[2][1]
    types, _ = raw_samples(run([go, "tool", "pprof", "-raw", export(A.pie, plain)],
                               env=env).stdout.decode())
    if types != want:
        fail("an export of a dump without variance lines has sample types %s" % types)
    print("variances written and read back: %d samples" % len(samples))


def golden_start_lines():
    """--start-line=NAME:LINE arguments of decode_check.py: the line of each definition in the
    golden program's source, found there (InlineHelper is only ever inlined; Box<int>::Make is
    defined inside its class)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "golden_prog.cc")
    definitions = {"Phase1": "void Phase1() {", "OuterInl": "void* OuterInl(size_t n) {",
                   "InlineHelper": "void* InlineHelper(size_t n) {",
                   "ns::Box::Make": "static void* Make(size_t n) {"}
    lines = open(src).read().splitlines()
    args = []
    for name, text in definitions.items():
        found = [i + 1 for i, l in enumerate(lines) if text in l]
        if len(found) != 1:
            raise SystemExit("expected one definition of %s in %s, found lines %s" % (name, src, found))
        args.append("--start-line=%s:%d" % (name, found[0]))
    return args


def check_decoder():
    if not A.python_gen or not os.path.exists(os.path.join(A.python_gen, "profile_pb2.py")):
        skip("profile_pb2.py was not generated (protoc missing?)")
    files = []
    for prog, legacy in legacy_profiles():
        files.append(export(prog, legacy))
        files.append(export(prog, legacy, "--heapcheck", tag=".heapcheck"))
    p = run([A.debian_python, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "decode_check.py"), A.python_gen] +
            golden_start_lines() + files, check=False)
    sys.stdout.write(p.stdout.decode())
    if p.returncode == 77:
        skip(p.stdout.decode().strip() or "Python protobuf missing")
    if p.returncode != 0:
        fail("decode_check.py:\n" + p.stdout.decode() + p.stderr.decode())


GO_PROGRAM = r'''
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func allocateRetained(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64<<10))
	}
}

func main() {
	runtime.MemProfileRate = 1
	allocateRetained(64)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		panic(err)
	}
	f.Close()
	runtime.KeepAlive(keep)
}
'''


def check_go_program():
    go = shutil.which("go")
    if not go:
        skip("go (golang-go) is not installed")
    d = os.path.join(A.work, "goprog")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "main.go")
    with open(src, "w") as f:
        f.write(GO_PROGRAM)
    env = {"GO111MODULE": "off", "GOFLAGS": "", "GOPROXY": "off", "GOPATH": os.path.join(d, "gopath"),
           "GOCACHE": os.path.join(A.work, "gocache"), "CGO_ENABLED": "0", "HOME": d}
    exe = os.path.join(d, "goheap")
    run([go, "build", "-o", exe, src], env=env)
    prof = os.path.join(d, "heap.pb.gz")
    run([exe, prof])
    p = pprof("--text", "--show_bytes", prof, check=False)
    out = p.stdout.decode()
    rows = top_rows(out)
    if p.returncode != 0 or "main.allocateRetained" not in rows:
        fail("Go heap profile: expected main.allocateRetained in:\n%s%s" % (out, p.stderr.decode()))
    elif rows["main.allocateRetained"][0] < 64 * 65536:
        fail("Go heap profile: main.allocateRetained holds %s bytes, expected >= %d" %
             (rows["main.allocateRetained"][0], 64 * 65536))
    # Same numbers as Go's own tool.
    theirs = top_rows(run([go, "tool", "pprof", "-top", "-unit=B", "-nodefraction=0", prof],
                          env=env).stdout.decode())
    if "main.allocateRetained" in rows and theirs.get("main.allocateRetained") != rows["main.allocateRetained"]:
        fail("Go heap profile: pprof-tool %s, go pprof %s" % (rows.get("main.allocateRetained"),
                                                            theirs.get("main.allocateRetained")))
    print(out)


def check_jemalloc():
    lib = A.jemalloc
    if not lib or not os.path.exists(lib):
        skip("libjemalloc2 is not installed")
    d = os.path.join(A.work, "jemalloc")
    os.makedirs(d, exist_ok=True)
    results = {}
    for lg in [0, 12]:
        for f in glob.glob(os.path.join(d, "je%d.*" % lg)):
            os.remove(f)
        conf = "prof:true,prof_final:true,lg_prof_sample:%d,prof_prefix:%s/je%d" % (lg, d, lg)
        p = run([A.pie], env={"LD_PRELOAD": lib, "MALLOC_CONF": conf}, check=False)
        dumps = glob.glob(os.path.join(d, "je%d.*.heap" % lg))
        if b"Invalid conf" in p.stderr or not dumps:
            skip("this libjemalloc2 was built without profiling: " + p.stderr.decode()[:200])
        dump = dumps[0]
        if not open(dump).readline().startswith("heap_v2/"):
            fail("%s: not a jemalloc heap_v2 dump" % dump)
        ours = top_rows(pprof("--text", "--show_bytes", "--nodefraction=0", A.pie, dump).stdout.decode())
        results[lg] = ours
        for name in ["LeafA", "LeafB", "LeafC", "InlineHelper", "main"]:
            if name not in ours:
                fail("jemalloc lg_prof_sample:%d: %s missing from %s" % (lg, name, sorted(ours)))
        jeprof = shutil.which("jeprof")
        if jeprof:
            text = run([jeprof, "--text", "--show_bytes", A.pie, dump], check=False).stdout.decode()
            m = re.search(r"Total: (\d+) B", text)
            total = sum(v[0] for v in ours.values())
            if not m:
                fail("jeprof printed no total:\n" + text)
            elif abs(total - int(m.group(1))) > 2 * len(ours) + 2:
                fail("jemalloc lg_prof_sample:%d: total %d (pprof-tool) vs %s (jeprof)" %
                     (lg, total, m.group(1)))
        # The export reads back with the same values (and go pprof reads it: go_pprof test).
        pb = export(A.pie, dump)
        back = top_rows(pprof("--text", "--show_bytes", "--nodefraction=0", pb).stdout.decode())
        # Sampled dumps: fractional estimates, rounded per sample in the int64 export.
        tol = 0 if lg == 0 else 8
        if set(back) != set(ours) or any(abs(back[k][i] - ours[k][i]) > tol
                                         for k in ours for i in (0, 1)):
            fail("jemalloc dump -> --proto -> --text differs:\n%s\n%s" % (ours, back))
    exact, sampled = results[0], results[12]
    if "LeafA" in exact and "LeafA" in sampled:
        ratio = sampled["LeafA"][1] / max(1, exact["LeafA"][1])
        print("LeafA cum: exact %d, un-sampled estimate %d (ratio %.2f)" %
              (exact["LeafA"][1], sampled["LeafA"][1], ratio))
        if not 0.5 < ratio < 2:
            fail("jemalloc un-sampling: estimate %.2fx the exact value" % ratio)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def check_hostile():
    d = os.path.join(A.work, "hostile")
    os.makedirs(d, exist_ok=True)
    strings = field(6, b"") + field(6, b"inuse_space") + field(6, b"bytes")
    sample_type = field(1, b"\x08\x01\x10\x02")
    good = sample_type + field(2, b"\x0a\x01\x01\x12\x01\x08") + field(4, b"\x08\x01\x18\x10") + strings
    cases = {
        "bad_varint.pb": sample_type + b"\x12" + b"\xff" * 11,
        "truncated.pb.gz": gzip.compress(good, mtime=0)[:-9],
        "bad_index.pb": field(1, b"\x08\x09\x10\x02") + strings,
        "no_location.pb": sample_type + field(2, b"\x0a\x01\x07\x12\x01\x08") + strings,
        "many_strings.pb.gz": None,
        "bomb.pb.gz": None,
    }
    # 10^7 empty strings (20 MB of protobuf, 20 KB gzipped).
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    many = z.compress(good) + z.compress(b"\x32\x00" * 10000000) + z.flush()
    cases["many_strings.pb.gz"] = many
    # 512 MiB of zeros after a valid start: a gzip bomb (~0.5 MB on disk).
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    bomb = [z.compress(good)]
    for _ in range(512):
        bomb.append(z.compress(chunk))
    bomb.append(z.flush())
    cases["bomb.pb.gz"] = b"".join(bomb)
    ok_path = os.path.join(d, "good.pb")
    with open(ok_path, "wb") as f:
        f.write(good)
    p = pprof("--text", "--show_bytes", ok_path, check=False)
    if p.returncode != 0:
        fail("the well-formed hand-made profile is rejected: " + p.stderr.decode())
    for name, data in cases.items():
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p = pprof("--text", path, check=False, limit_as=2 << 30)
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        err = p.stderr.decode().strip().splitlines()
        print("%s: exit %d, max RSS %.0f MB: %s" % (name, p.returncode, rss_mb, err))
        if p.returncode != 2 or len(err) != 1 or not err[0].startswith("pprof-tool: %s: " % path):
            fail("%s: expected one line 'pprof-tool: %s: ...' and exit 2, found exit %d %s" %
                 (name, path, p.returncode, err))
        if rss_mb > 600 and before / 1024 <= 600:
            fail("%s: max RSS %.0f MB (bounded memory expected)" % (name, rss_mb))


def main():
    global A
    ap = argparse.ArgumentParser()
    for a in ["pprof-tool", "pie", "nopie", "tcmalloc", "work", "python-gen", "debian-python",
              "jemalloc"]:
        ap.add_argument("--" + a, default="")
    ap.add_argument("check")
    A = ap.parse_args()
    if not os.path.exists(A.tcmalloc):
        skip("Debian's libtcmalloc (google-perftools) is not installed")
    A.work = os.path.join(A.work, A.check)
    shutil.rmtree(A.work, ignore_errors=True)
    os.makedirs(A.work)
    {"go_pprof": check_go_pprof, "roundtrip": check_roundtrip, "decoder": check_decoder,
     "go_program": check_go_program, "jemalloc": check_jemalloc, "variance": check_variance,
     "hostile": check_hostile}[A.check]()
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
