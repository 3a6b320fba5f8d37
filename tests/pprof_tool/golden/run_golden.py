#!/usr/bin/env python3
"""Golden-file, oracle and bad-input tests for pprof-tool.

  run_golden.py <common args> golden      compare every report/option with expected/*.txt
  run_golden.py <common args> badfiles    corrupt/truncated/binary/... files: one line, exit 2
  run_golden.py <common args> cli         --help, wrong options
  run_golden.py <common args> setup       profile the golden programs now (into --work)
  run_golden.py <common args> crosscheck  totals and top functions vs google-pprof
  run_golden.py <common args> symbols     --symbols, --raw round trip, missing binary
  run_golden.py <common args> heapcheck   gperftools' leak checker *-end.heap

golden, badfiles and cli read only the checked-in profiles in inputs/ (--inputs), symbolized so
that no binary is needed: the same bytes, hence the same reports, whatever compiler or build
directory (ccache's relative DWARF paths included). The profiles as the golden programs were
built and profiled once:
  pie.final.pb.gz, pie.phase1.pb.gz, nopie.final.pb.gz  `pprof-tool --proto <prog> <heap>`,
      made stable by normalize_proto.py (sources tests/pprof_tool/golden/<file>, mapped files by
      base name, no build ids or times)
  pie.final.heap          `pprof-tool --raw`: the legacy text format, self-contained
  pie.v2.heap, pie.v1.heap the same lines under heap_v2/4096 and heap/8192 headers
pprof-tool runs from the source tree, so --list finds tests/pprof_tool/golden/*.cc.
setup, crosscheck, symbols and heapcheck profile the programs at test time: they test what
needs the binaries (DWARF symbolization, google-pprof as oracle, leak checker dumps).

HEAPKIT_UPDATE_GOLDEN=1 with `golden` profiles the programs again (Debian's libtcmalloc; Python
protobuf for normalize_proto.py), rewrites inputs/ and then expected/*.txt instead of comparing.
Outputs are normalized (source and work directories replaced) so goldens hold names, not paths.
Every child process runs with a timeout.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

TIMEOUT = 30
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import fail, failures  # noqa: E402


def run(cmd, env=None, stdin=None, check=False):
    full_env = dict(os.environ)
    full_env.pop("DEBUGINFOD_URLS", None)
    if env:
        full_env.update(env)
    # From the source tree: the checked-in profiles name their sources relative to it.
    p = subprocess.run(cmd, env=full_env, input=stdin, capture_output=True, timeout=TIMEOUT,
                       cwd=A.source_dir or None)
    if check and p.returncode != 0:
        raise SystemExit("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                         p.stderr.decode(errors="replace")))
    return p


def args_parser():
    ap = argparse.ArgumentParser()
    for a in ["pprof-tool", "pie", "nopie", "lib", "tcmalloc", "google-pprof",
              "heapkit", "expected", "inputs", "python-gen", "debian-python", "source-dir", "work"]:
        ap.add_argument("--" + a, default="")
    ap.add_argument("group")
    return ap


def profile_with_tcmalloc(prog, prefix, extra_env=None, argv=()):
    for f in glob.glob(prefix + ".*.heap"):
        os.remove(f)
    env = {"LD_PRELOAD": A.tcmalloc, "HEAPPROFILE": prefix}
    if extra_env:
        env.update(extra_env)
    run([prog] + list(argv), env=env, check=True)
    dumps = sorted(glob.glob(prefix + ".*.heap"))
    if len(dumps) < 2:
        raise SystemExit("expected 2 heap dumps from %s, got %s" % (prog, dumps))
    return dumps


def with_header_kind(text, kind):
    """The legacy profile in text (after a --raw symbol section, if any) under another header."""
    symbols, sep, profile = text.rpartition("\n---\n")
    header, rest = profile.split("\n", 1)
    return symbols + sep + header.split("@")[0] + "@ " + kind + "\n" + rest


def setup():
    os.makedirs(A.work, exist_ok=True)
    for kind, prog in [("pie", A.pie), ("nopie", A.nopie)]:
        d = profile_with_tcmalloc(prog, os.path.join(A.work, kind))
        shutil.copy(d[0], os.path.join(A.work, kind + ".phase1.heap"))
        shutil.copy(d[-1], os.path.join(A.work, kind + ".final.heap"))
    # heap_v2 and heap (v1) variants of the exact profile: same lines read as sampled data,
    # so both pprofs must un-sample them identically (Debian's tcmalloc writes empty heap
    # samples, so a real heap_v2 file comes from heapkit below when it is built).
    text = open(os.path.join(A.work, "pie.final.heap")).read()
    for name, kind in [("v2", "heap_v2/4096"), ("v1", "heap/8192")]:
        with open(os.path.join(A.work, "pie.%s.heap" % name), "w") as f:
            f.write(with_header_kind(text, kind))
    # heapkit's own profiler, when built and working (non-fatal until then).
    if A.heapkit and os.path.exists(A.heapkit):
        prefix = os.path.join(A.work, "hk")
        for f in glob.glob(prefix + ".*.heap"):
            os.remove(f)
        try:
            run([A.pie], env={"LD_PRELOAD": A.heapkit, "HEAPPROFILE": prefix,
                              "TCMALLOC_SAMPLE_PARAMETER": "1024"})
        except subprocess.TimeoutExpired:
            pass
        dumps = sorted(glob.glob(prefix + ".*.heap"))
        if dumps:
            shutil.copy(dumps[-1], os.path.join(A.work, "heapkit.final.heap"))
    print("profiles in " + A.work)


def update_inputs():
    """Profiles the golden programs now and rewrites the checked-in inputs/ from them."""
    setup()
    os.makedirs(A.inputs, exist_ok=True)
    for prog, heap, name in [(A.pie, "pie.final.heap", "pie.final"),
                             (A.pie, "pie.phase1.heap", "pie.phase1"),
                             (A.nopie, "nopie.final.heap", "nopie.final")]:
        raw_pb = W(name + ".pb.gz")
        run([A.pprof_tool, "--proto", "--output=" + raw_pb, prog, W(heap)], check=True)
        p = run([A.debian_python or sys.executable,
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "normalize_proto.py"),
                 A.python_gen, raw_pb, os.path.join(A.inputs, name + ".pb.gz")])
        if p.returncode != 0:
            raise SystemExit("normalize_proto.py failed: %s" % (p.stdout + p.stderr).decode())
    # The legacy text inputs: --raw keeps the symbols; the programs' paths lose their directory.
    raw = run([A.pprof_tool, "--raw", A.pie, W("pie.final.heap")], check=True).stdout.decode()
    for path in [A.pie, A.nopie, A.lib]:
        raw = raw.replace(os.path.realpath(path), os.path.basename(path))
        raw = raw.replace(path, os.path.basename(path))
    for name, text in [("pie.final.heap", raw), ("pie.v2.heap", with_header_kind(raw, "heap_v2/4096")),
                       ("pie.v1.heap", with_header_kind(raw, "heap/8192"))]:
        with open(os.path.join(A.inputs, name), "w") as f:
            f.write(text)
    print("inputs rewritten in " + A.inputs)


def normalize(text):
    text = text.replace(os.path.realpath(A.source_dir), "<SRC>").replace(A.source_dir, "<SRC>")
    text = text.replace(os.path.realpath(A.work), "<WORK>").replace(A.work, "<WORK>")
    for path in [A.pie, A.nopie, A.lib]:
        text = text.replace(os.path.dirname(os.path.realpath(path)), "<BIN>")
    text = re.sub(r"pprof_golden_(pie|nopie)", "<PROG>", text)
    return text


def pprof(args, stdin=None):
    return run([A.pprof_tool] + args, stdin=stdin)


def golden_case(name, args, stdin=None):
    p = pprof(args, stdin=stdin)
    out = normalize(p.stdout.decode(errors="replace"))
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        fail("%s: exit %d: %s" % (name, p.returncode, err.strip()))
        return
    path = os.path.join(A.expected, name + ".txt")
    if updating():
        os.makedirs(A.expected, exist_ok=True)
        with open(path, "w") as f:
            f.write(out)
        print("updated " + path)
        return
    if not os.path.exists(path):
        fail("%s: no golden %s (run with HEAPKIT_UPDATE_GOLDEN=1)" % (name, path))
        return
    with open(path) as f:
        want = f.read()
    if want != out:
        import difflib
        diff = "".join(difflib.unified_diff(want.splitlines(True), out.splitlines(True),
                                            "expected/" + name + ".txt", "actual"))
        fail("%s: output differs (pprof-tool %s)\n%s" % (name, " ".join(args), diff))


LIBC_START = "libc_start|libc-start|^_start$|^__libc_start_main"


def W(name):
    return os.path.join(A.work, name)


def I(name):
    """A checked-in input profile."""
    return os.path.join(A.inputs, name)


def updating():
    return os.environ.get("HEAPKIT_UPDATE_GOLDEN") == "1"


def golden():
    if updating():
        update_inputs()
    # Goldens hide the C runtime's start-up frames (unless the case tests --hide itself):
    # their names and files depend on whether libc had debug info (libc6-dbg) when the inputs
    # were made.
    pie, nopie, phase1 = I("pie.final.pb.gz"), I("nopie.final.pb.gz"), I("pie.phase1.pb.gz")
    cases = [
        ("text_pie", [pie]),
        ("text_nopie", ["--text", nopie]),
        ("top3", ["--top=3", pie]),
        ("top3_go_style", ["-top=3", pie]),
        ("cum", ["--cum", pie]),
        ("inuse_objects", ["--inuse_objects", pie]),
        ("alloc_space", ["--alloc_space", "--focus=^main$", pie]),
        ("alloc_objects", ["--alloc_objects", "--focus=^main$", pie]),
        ("show_bytes", ["--show_bytes", pie]),
        ("lines", ["--lines", pie]),
        ("files", ["--files", "--focus=golden_", pie]),
        ("traces", ["--traces", nopie]),
        ("traces_lines", ["--traces", "--lines", pie]),
        ("collapsed", ["--collapsed", pie]),
        ("list", ["--list=^OuterInl$|^LeafB$", pie]),
        ("callgrind", ["--callgrind", "--focus=^main$", pie]),
        ("base", ["--base=" + phase1, pie]),
        ("base_negative", ["--base=" + pie, phase1]),
        ("sum_two", [pie, phase1]),
        ("focus", ["--focus=Phase2", pie]),
        ("ignore", ["--ignore=Phase2", pie]),
        ("hide", ["--hide=^(Phase1|Phase2)$|" + LIBC_START, "--traces", pie]),
        ("show", ["--show=^Leaf", "--collapsed", pie]),
        ("nodefraction", ["--nodefraction=0.2", pie]),
        ("heapcheck_flag", ["--heapcheck", pie]),
        ("shared_lib_lines", ["--lines", "--focus=lib::", nopie]),
        # The legacy text format (--raw, symbols included) read as sampled data: heap_v2 and
        # heap (v1) headers over the exact profile's lines.
        ("heap_exact_raw", [I("pie.final.heap")]),
        ("heap_v2", [I("pie.v2.heap")]),
        ("heap_v2_alloc", ["--alloc_space", "--focus=^main$", I("pie.v2.heap")]),
        ("heap_v1", [I("pie.v1.heap")]),
        # The allocation path and the options around it.
        ("keep_allocator_frames", ["--keep_allocator_frames", "--alloc_space", "--traces", "--focus=^std::", pie]),
        ("allocator_frames_dropped", ["--alloc_space", "--traces", "--focus=^std::", pie]),
        ("drop_frames", ["--drop_frames=^Leaf[AB]$", pie]),
        ("show_from", ["--show_from=^Phase[12]$", "--traces", pie]),
        # Differences: go pprof's --diff_base (percentages of the base), --drop_negative.
        ("diff_base", ["--diff_base=" + phase1, pie]),
        ("drop_negative", ["--base=" + pie, "--drop_negative", phase1]),
        ("tree", ["--tree", pie]),
        ("peek", ["--peek=^Phase2$", pie]),
    ]
    for name, args in cases:
        if not any(a.startswith("--hide") for a in args):
            args = ["--hide=" + LIBC_START] + args
        golden_case(name, args)
    os.makedirs(A.work, exist_ok=True)
    # Spellings that must give the same report as another one.
    same = [
        (["--no_drop_allocator"], ["--keep_allocator_frames"]),
        (["--symbolize=demangle=full"], ["--full_names"]),
        (["-o", W("dash_o.txt"), "-top"], ["--output=" + W("dash_o.txt"), "--top"]),
        (["-o=" + W("dash_o.txt")], ["-output=" + W("dash_o.txt")]),
    ]
    for a, b in same:
        outs = []
        for args in (a, b):
            p = pprof(args + [pie])
            text = p.stdout.decode()
            if os.path.exists(W("dash_o.txt")):
                text += open(W("dash_o.txt")).read()
                os.remove(W("dash_o.txt"))
            outs.append((p.returncode, text))
        if outs[0] != outs[1] or outs[0][0] != 0 or not outs[0][1]:
            fail("%s and %s differ: %r / %r" % (a, b, outs[0][:300], outs[1][:300]))
    if glob.glob(os.path.join(A.source_dir, "=*")) or glob.glob(W("=*")):
        fail("-o=<file> created a file whose name starts with '='")
    # --base: the columns stay apart when a value is at or below -100% (-500.00% here).
    for name, body in [("after", " 1: 6000 [ 1: 6000] @ 0x1000\n"), ("before", " 1: 5000 [ 1: 5000] @ 0x2000\n")]:
        with open(W("cols_%s.heap" % name), "w") as f:
            f.write("heap profile: 1: 1 [ 1: 1] @ heapprofile\n" + body)
    p = pprof(["--base=" + W("cols_before.heap"), W("cols_after.heap")])
    rows = [l for l in p.stdout.decode().splitlines() if l.endswith(" 0xfff") or l.endswith(" 0x1fff")]
    if len(rows) != 2 or "-500.00%" not in p.stdout.decode():
        fail("--base columns: unexpected report %r" % p.stdout)
    for line in rows:
        if len(line.split()) != 6:
            fail("--base: columns run together: %r" % line)
    # --addresses: addresses differ per build; check shape and that names survive.
    p = pprof(["--addresses", pie])
    out = p.stdout.decode()
    if p.returncode != 0 or not re.search(r"0x[0-9a-f]+ LeafB golden_prog.cc:\d+", out):
        fail("addresses: unexpected output\n" + out)
    # Same totals and ranking from PIE and non-PIE builds.
    a = pprof([pie]).stdout.decode().split("\n", 1)[1]
    b = pprof([nopie]).stdout.decode().split("\n", 1)[1]
    if a != b:
        fail("PIE and non-PIE reports differ:\n%s\n---\n%s" % (a, b))


GP_LINE = re.compile(r"^\s*(\S+)\s+(\S+)%\s+(\S+)%\s+(\S+)\s+(\S+)%\s+(.*)$")


def strip_templates(name):
    prev = None
    while prev != name:
        prev = name
        name = re.sub(r"<[^<>]*>", "", name)
    return name


def flat_table(text, google):
    rows = []
    for line in text.splitlines():
        m = GP_LINE.match(line)
        if not m or m.group(1) == "flat":
            continue
        name = m.group(6).strip()
        if google:
            name = name.split(" ")[0] if " " in name and "operator" not in name else name
        rows.append((strip_templates(name), float(m.group(1)), float(m.group(4))))
    return rows


def crosscheck():
    heapkit_vs_exact()
    if not A.google_pprof or not os.path.exists(A.google_pprof):
        print("google-pprof not installed: crosscheck skipped")
        return
    inputs = [(A.pie, W("pie.final.heap"), []), (A.nopie, W("nopie.final.heap"), []),
              (A.pie, W("pie.final.heap"), ["--alloc_space"]),
              (A.pie, W("pie.final.heap"), ["--inuse_objects"])]
    inputs.append((A.pie, W("pie.v2.heap"), []))
    inputs.append((A.pie, W("pie.v2.heap"), ["--alloc_objects"]))
    if os.path.exists(W("heapkit.final.heap")):
        inputs.append((A.pie, W("heapkit.final.heap"), []))
        inputs.append((A.pie, W("heapkit.final.heap"), ["--alloc_space"]))
    for prog, prof, opts in inputs:
        g = run([A.google_pprof, "--text", "--show_bytes"] + opts + [prog, prof])
        gtext = g.stdout.decode(errors="replace")
        m = re.search(r"^Total: (\S+)", gtext, re.M)
        if g.returncode != 0 or not m:
            fail("google-pprof failed on %s: %s" % (prof, g.stderr.decode(errors="replace")))
            continue
        gtotal = float(m.group(1))
        # google-pprof knows no inlined frames: compare physical functions.
        o = pprof(["--text", "--show_bytes", "--nodefraction=0", "--noinlines"] + opts + [prog, prof])
        otext = o.stdout.decode()
        m2 = re.search(r"of (\S+) total", otext)
        if o.returncode != 0 or not m2:
            fail("pprof-tool failed on %s: %s" % (prof, o.stderr.decode()))
            continue
        ototal = float(m2.group(1))
        # google-pprof prints rounded integers for bytes/objects.
        if abs(ototal - gtotal) > max(1.0, 1e-6 * abs(gtotal)):
            fail("%s %s: total %s != google-pprof %s" % (prof, opts, ototal, gtotal))
        gflat = {(n, round(f)) for n, f, _ in flat_table(gtext, True) if f != 0}
        oflat = {(n, round(f)) for n, f, _ in flat_table(otext, False) if f != 0}
        gtop = sorted(gflat, key=lambda x: (-x[1], x[0]))[:10]
        otop = sorted(oflat, key=lambda x: (-x[1], x[0]))[:10]

        # Names are compared for entries holding >= 1% of the total. Below that google-pprof can
        # name the wrong function: it looks the leaf up at the raw return address (no -1), which
        # after a call at the very end of a function lands in the next symbol. Values are
        # compared for every entry.
        # google-pprof keeps the C++ library's allocation frames as leaves (in heapkit's exit
        # dump, g_keep's buffer: std::__new_allocator::allocate), pprof-tool charges their caller.
        def close(a, b):
            same_name = a[0] == b[0] or abs(a[1]) < 0.01 * abs(gtotal) or a[0].startswith("std::")
            return same_name and abs(a[1] - b[1]) <= max(1, 1e-6 * abs(a[1]))
        if len(gtop) != len(otop) or not all(close(a, b) for a, b in zip(gtop, otop)):
            fail("%s %s: top functions differ\n google-pprof: %s\n pprof-tool:   %s" %
                 (prof, opts, gtop, otop))
        else:
            print("crosscheck %s %s: total %.0f, top %s" % (os.path.basename(prof), opts, ototal,
                                                           [n for n, _ in otop[:4]]))


def heapkit_vs_exact():
    """heapkit's sampled profile of the golden program, un-sampled by pprof-tool, must estimate
    the exact (gperftools HEAPPROFILE) in-use total within 30% and find the same 4 leaves."""
    if not os.path.exists(W("heapkit.final.heap")):
        print("no heapkit profile (libheapkit not built): skipped")
        return
    def top(path):
        o = pprof(["--text", "--show_bytes", A.pie, path])
        text = o.stdout.decode()
        m = re.search(r"of (\S+) total", text)
        names = {n for n, f, _ in flat_table(text, False) if f > 0}
        return float(m.group(1)) if m else 0.0, names
    exact_total, exact_names = top(W("pie.final.heap"))
    hk_total, hk_names = top(W("heapkit.final.heap"))
    if not (0.7 * exact_total <= hk_total <= 1.3 * exact_total):
        fail("heapkit estimate %.0f vs exact %.0f: off by more than 30%%" % (hk_total, exact_total))
    # heapkit's exit dump is taken before global destructors: g_keep's buffer, reserved in
    # main, is still held there (gperftools dumps after the destructors freed it).
    hk_names.discard("main")
    if hk_names != exact_names:
        fail("heapkit profile leaves %s != exact %s" % (sorted(hk_names), sorted(exact_names)))
    print("heapkit estimate %.0f B vs exact %.0f B; leaves %s" % (hk_total, exact_total, sorted(hk_names)))


def expect_error(name, args, needle, stdin=None):
    p = pprof(args, stdin=stdin)
    err = p.stderr.decode(errors="replace")
    lines = [l for l in err.splitlines() if l.strip()]
    if p.returncode != 2:
        fail("%s: exit %d, want 2 (stderr: %s)" % (name, p.returncode, err))
    elif not lines or not lines[0].startswith("pprof-tool: ") or needle not in lines[0]:
        fail("%s: want one line with %r, got %r" % (name, needle, err))
    elif len([l for l in lines if not l.startswith("usage:")]) != 1:
        fail("%s: more than one error line: %r" % (name, err))


def badfiles():
    # The checked-in exact profile without its --raw symbol section: the legacy text as written.
    good = open(I("pie.final.heap"), "rb").read().rpartition(b"\n---\n")[2]
    os.makedirs(A.work, exist_ok=True)
    d = W("bad")
    os.makedirs(d, exist_ok=True)

    def write(name, data):
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        return path
    header_end = good.index(b"\n") + 1
    second = good.index(b"\n", header_end)
    cases = [
        ("truncated", write("trunc.heap", good[:header_end + 12]), ":2: expected a sample line"),
        ("binary", write("bin.heap", open(A.pprof_tool, "rb").read()[:4096]), ":1: expected a heap profile header"),
        ("wrong_header", write("hdr.heap", b"heap profile: 1: 2 [ 3: 4] @ cpu\n"), "found 'cpu'"),
        ("cpu_profile_text", write("go.heap", b"--- contention:\ncycles/second=1\n"), ":1: expected a heap profile header"),
        ("huge_counts", write("huge.heap", good[:header_end] + b" 123456789012345678901: 1 [ 1: 1] @ 0x1\n"), ":2: expected counts below 2^53"),
        ("lying_header", write("lie.heap", b"heap profile: 1: 1 [ 1: 1] @ heap_v2/-5\n"), ":1: expected a sampling rate"),
        ("garbage_line", write("garbage.heap", good[:second + 1] + b"this is not a sample\n" + good[second + 1:]), ":3: expected a sample line"),
        ("empty", write("empty.heap", b""), ":1: expected a heap profile header"),
        ("nonexistent", os.path.join(d, "nope.heap"), "nope.heap: cannot open: No such file"),
        ("directory", d, "expected a regular file"),
    ]
    for name, path, needle in cases:  # a program first: an ELF file alone would be taken as one
        expect_error("badfile " + name, [A.pprof_tool, path], needle)
    expect_error("bad base", ["--base=" + os.path.join(d, "nope.heap"), I("pie.final.heap")], "cannot open")
    unreadable = write("unreadable.heap", good)
    os.chmod(unreadable, 0)
    if os.geteuid() != 0:
        expect_error("unreadable", [unreadable], "Permission denied")
    # A mapped file that is not ELF (a locale archive, a font) is skipped without a warning;
    # a missing one still gets its warning. (The profile's own mapped files are named without
    # a directory: the missing ones are warned about too, under their own names.)
    notelf = write("LC_CTYPE", b"not an ELF file\n" * 100)
    text = good.decode()
    for path, want_warning in [(notelf, False), (os.path.join(d, "missing.so"), True)]:
        extra = "7f0000000000-7f0000010000 r--p 00000000 08:01 42    %s\n" % path
        prof = write("extra_map.heap", (text if text.endswith("\n") else text + "\n").encode() + extra.encode())
        p = pprof([prof])
        warned = path in p.stderr.decode()
        if p.returncode != 0 or warned != want_warning:
            fail("mapped %s: warning %s, want %s: %r" % (path, warned, want_warning, p.stderr))
    # The header alone of a profile with records: cut after its first line (truncated).
    p = pprof([write("hdronly.heap", good[:header_end])])
    if p.returncode != 2 or not re.match(rb"pprof-tool: .*hdronly\.heap:1: expected the header's "
                                         rb"\d+ in-use and \d+ allocated objects, found 0 and 0 "
                                         rb"and no memory map \(truncated\?\)\n$", p.stderr):
        fail("header-only profile: %r %r" % (p.stdout, p.stderr))
    # A header of an empty heap, alone: a valid, empty profile.
    p = pprof([write("empty.heap", b"heap profile:      0:        0 [     0:        0] @ heapprofile\n")])
    if p.returncode != 0 or b"of 0 total" not in p.stdout:
        fail("empty profile: %r %r" % (p.stdout, p.stderr))


def cli():
    p = pprof(["--help"])
    text = p.stdout.decode()
    if p.returncode != 0:
        fail("--help exit %d" % p.returncode)
    for opt in ["--text", "--top", "--traces", "--list", "--collapsed", "--callgrind", "--raw",
                "--symbols", "--inuse_space", "--inuse_objects", "--alloc_space",
                "--alloc_objects", "--show_bytes", "--base", "--heapcheck", "--functions",
                "--lines", "--files", "--addresses", "--focus", "--ignore", "--hide", "--show",
                "--nodecount", "--nodefraction", "--edgefraction", "--cum", "--dot", "--svg",
                "--png", "--pdf", "--web", "--flamegraph", "--output", "--tree", "--peek",
                "--diff_base", "--drop_negative", "--drop_frames", "--show_from",
                "--keep_allocator_frames", "--no_drop_allocator", "--full_names",
                "--symbolize", "--symbol_path", "--version", "--http", "--no_browser",
                "--timeline"]:
        if opt not in text:
            fail("--help does not mention " + opt)
    if "E.g." not in text:
        fail("--help has no examples")
    p = pprof(["--version"])
    if p.returncode != 0 or not re.match(r"pprof-tool \(heapkit\) \d+\.\d+", p.stdout.decode()):
        fail("--version: %r %r" % (p.stdout, p.stderr))
    expect_error("bad http address", ["-http=localhost", I("pie.final.heap")], "expected [host]:port")
    expect_error("no_browser without http", ["--no_browser", I("pie.final.heap")], "--http only")
    expect_error("program without profile", [A.pprof_tool], "no profile given")
    expect_error("base and diff_base", ["--base=" + I("pie.final.heap"), "--diff_base=" + I("pie.final.heap"), I("pie.final.heap")], "choose one of --base")
    expect_error("bad symbolize", ["--symbolize=none", I("pie.final.heap")], "demangle=full")
    expect_error("bad drop_frames", ["--drop_frames=(", I("pie.final.heap")], "invalid regular expression")
    expect_error("peek no match", ["--peek=NoSuchFunction", I("pie.final.heap")], "no function matches")
    expect_error("unknown option", ["--bogus", I("pie.final.heap")], "bogus")
    expect_error("two reports", ["--text", "--traces", I("pie.final.heap")], "choose one report")
    expect_error("no profile", [], "no profile")
    expect_error("bad number", ["--nodecount=abc", I("pie.final.heap")], "nodecount")
    expect_error("bad regex", ["--focus=([", I("pie.final.heap")], "invalid regular expression")
    expect_error("list no match", ["--list=NoSuchFunction", I("pie.final.heap")], "no function matches")
    # Output file.
    os.makedirs(A.work, exist_ok=True)
    out = W("out.txt")
    p = pprof(["--top=2", "--output=" + out, I("pie.final.heap")])
    if p.returncode != 0 or "flat%" not in open(out).read():
        fail("--output did not write the report")
    expect_error("unwritable output", ["--output=/nonexistent/dir/x", I("pie.final.heap")], "cannot open for writing")


def symbols():
    # The binaries found through the profile's MAPPED_LIBRARIES: the same report as with the
    # program named on the command line.
    with_prog = pprof([A.pie, W("pie.final.heap")])
    from_maps = pprof([W("pie.final.heap")])
    if with_prog.returncode != 0 or with_prog.stdout != from_maps.stdout or from_maps.stderr:
        fail("program from MAPPED_LIBRARIES: report differs or warns:\n%s\n---\n%s%s" % (
            with_prog.stdout.decode(), from_maps.stdout.decode(), from_maps.stderr.decode()))
    # C++ names: simplified by default (ns::Box::Make), whole with --full_names, the whole name
    # on hover in graph boxes and flame graphs. Whole names come from the binary (a profile.proto
    # keeps only the report name), so these run here and not on the checked-in inputs.
    simple = pprof([A.pie, W("pie.final.heap")]).stdout.decode()
    for args, prog, prof in [(["--full_names"], A.pie, W("pie.final.heap")),
                             (["--full_names", "--traces"], A.nopie, W("nopie.final.heap"))]:
        full = pprof(args + [prog, prof]).stdout.decode()
        for name in ["ns::Box<int>::Make(unsigned long)", "LeafA(unsigned long)", "Phase2()"]:
            if name not in full:
                fail("%s: %r missing:\n%s" % (args, name, full))
    if "ns::Box::Make" not in simple or "(unsigned long)" in simple:
        fail("default names are not simplified:\n" + simple)
    for args, needle in [(["--svg"], "ns::Box&lt;int&gt;::Make(unsigned long)"),
                         (["--flamegraph"], "<title>ns::Box&lt;int&gt;::Make(unsigned long)")]:
        out = pprof(args + [A.pie, W("pie.final.heap")]).stdout.decode()
        if needle not in out or ">ns::Box::Make<" not in out.replace("</text>", "<"):
            fail("%s: want the simplified name in the box and %r on hover" % (args, needle))
    # --raw round trip: the self-contained profile gives the same report without binaries.
    raw = W("raw.heap")
    p = pprof(["--raw", "--output=" + raw, A.pie, W("pie.final.heap")])
    if p.returncode != 0:
        fail("--raw failed: " + p.stderr.decode())
        return
    a = pprof([A.pie, W("pie.final.heap")]).stdout.decode().split("\n", 1)[1]
    b = pprof([raw]).stdout.decode().split("\n", 1)[1]
    if a.replace("InlineHelper", "") != b.replace("InlineHelper", "") or not b:
        fail("--raw round trip differs:\n%s\n---\n%s" % (a, b))
    g = A.google_pprof and os.path.exists(A.google_pprof) and run([A.google_pprof, "--text", raw])
    if g and (g.returncode != 0 or b"OuterInl" not in g.stdout):
        fail("google-pprof cannot read our --raw output: %r" % g.stderr[:300])
    # Profiles of two different processes (ASLR) are summed: same names, twice the total.
    two = [profile_with_tcmalloc(A.pie, W("run%d" % i))[-1] for i in (1, 2)]
    one = pprof(["--show_bytes", A.pie, two[0]])
    both = pprof(["--show_bytes", A.pie] + two)
    t1 = re.search(r"of (\S+) total", one.stdout.decode())
    t2 = re.search(r"of (\S+) total", both.stdout.decode())
    if not t1 or not t2 or float(t2.group(1)) != 2 * float(t1.group(1)) or both.stderr:
        fail("summing two processes' profiles: %r / %r %r" % (one.stdout[:300], both.stdout[:300], both.stderr))
    elif "LeafC" not in both.stdout.decode() or "+0x" in both.stdout.decode():
        fail("summing two processes' profiles lost symbols:\n" + both.stdout.decode())
    # --symbols: non-PIE addresses from nm.
    nm = run(["nm", "-C", A.nopie], check=True).stdout.decode()
    addrs = {}
    for line in nm.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "Tt" and parts[2] in ("LeafA(unsigned long)", "Phase2()", "main"):
            addrs[parts[2].split("(")[0]] = int(parts[0], 16)
    maps = open(W("nopie.final.heap")).read().split("MAPPED_LIBRARIES:\n", 1)[1]
    stdin = maps + "".join("0x%x\n" % (a + 4) for a in addrs.values())
    p = pprof(["--symbols"], stdin=stdin.encode())
    out = p.stdout.decode()
    for name in addrs:
        if not re.search(r"^0x[0-9a-f]+ %s$" % re.escape(name), out, re.M):
            fail("--symbols: %s not found in %r" % (name, out))
    p = pprof(["--symbols", A.nopie], stdin=("0x%x\n" % (addrs["LeafA"] + 4)).encode())
    if p.returncode != 0 or "LeafA" not in p.stdout.decode():
        fail("--symbols <program> without maps: %r %r" % (p.stdout, p.stderr))
    # Missing binary: module+0xoffset names and one warning per module, still exit 0.
    tmp = W("moved")
    os.makedirs(tmp, exist_ok=True)
    moved = os.path.join(tmp, "golden_copy")
    shutil.copy(A.pie, moved)
    prefix = os.path.join(tmp, "m")
    d = profile_with_tcmalloc(moved, prefix)
    os.remove(moved)
    p = pprof([d[-1]])
    err = p.stderr.decode()
    if p.returncode != 0 or "golden_copy+0x" not in p.stdout.decode():
        fail("missing binary: %r %r" % (p.stdout[:500], err))
    if len([l for l in err.splitlines() if "golden_copy" in l]) != 1 or "warning" not in err:
        fail("missing binary: want exactly one warning naming it, got %r" % err)
    # Changed binary: a different program at the profile's path.
    shutil.copy("/bin/true", moved) if os.path.exists("/bin/true") else None
    p = pprof([d[-1]])
    if p.returncode != 0 or "golden_copy" not in p.stderr.decode():
        fail("changed binary: %r" % p.stderr)


def heapcheck():
    # Leak checker dumps: HEAPCHECK=normal writes <dir>/<prog>.<pid>._main_-end.heap, by
    # gperftools' libtcmalloc and (when built) by heapkit.
    for label, lib in [("gperftools", A.tcmalloc), ("heapkit", A.heapkit)]:
        if not lib or not os.path.exists(lib):
            print("%s: not available, skipped" % label)
            continue
        d = W("hc_" + label)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        env = {"LD_PRELOAD": lib, "HEAPCHECK": "normal", "HEAP_CHECK_DUMP_DIRECTORY": d,
               "GOLDEN_LEAK": "1", "PPROF_PATH": "/bin/false"}
        try:
            run([A.nopie], env=env)
        except subprocess.TimeoutExpired:
            fail("%s: leak-checked run timed out" % label)
            continue
        dumps = glob.glob(os.path.join(d, "*-end.heap"))
        if not dumps:
            print("%s: leak checker wrote no *-end.heap here: skipped" % label)
            continue
        p = pprof(["--heapcheck", A.nopie, dumps[0]])
        out = p.stdout.decode()
        if p.returncode != 0 or "leak check" not in out:
            fail("%s heapcheck: %r %r" % (label, out, p.stderr))
            continue
        for fn in ["LeafA", "LeafB", "LeafC", "lib::LibAlloc"]:
            if fn not in out:
                fail("%s heapcheck: leaked %s not reported:\n%s" % (label, fn, out))
        print("%s: %s read, leaks reported in %s" % (label, os.path.basename(dumps[0]),
                                                     re.findall(r"of (\S+) total", out)))


A = None


def main():
    global A
    A = args_parser().parse_args()
    A.pprof_tool = getattr(A, "pprof_tool")
    groups = {"setup": setup, "golden": golden, "crosscheck": crosscheck, "badfiles": badfiles,
              "cli": cli, "symbols": symbols, "heapcheck": heapcheck}
    groups[A.group]()
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
