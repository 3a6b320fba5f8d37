#!/usr/bin/env python3
"""The otel_memory USDT probes (alloc/usdt_probes.h) seen by real consumers.

  notes  `readelf -n` of every library flavour and of statically linked programs shows the
         stapsdt notes: provider otel_memory, probes alloc (three 8-byte unsigned arguments) and
         free (one), each with the address of its semaphore symbol; the on-demand library
         carries none (it never allocates user objects).
  gdb    gdb's `break -probe-stap otel_memory:alloc` / `:free` on usdt_target.cc: every alloc
         hit is one of the program's own allocations with its size and the weight
         S / (1 - exp(-S/R)); the 64 MiB object is always among them with weight S; every
         sampled object the program freed fires free with the same address exactly once, and
         no other object of the program does. Run per way of getting heapkit into a program
         (below), each with the period R it sets.
Exit 77 (skipped) when gdb or readelf is missing or the runtime was built without <sys/sdt.h>.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def skip(message):
    print("SKIP: " + message)
    sys.exit(77)


def stapsdt_notes(path):
    """[(provider, name, semaphore address, arguments)] from `readelf -n`."""
    out = subprocess.run(["readelf", "-n", "-W", path], capture_output=True, text=True).stdout
    notes = []
    for m in re.finditer(r"Provider: (\S+)\s+Name: (\S+)\s+Location: 0x([0-9a-f]+), "
                         r"Base: 0x([0-9a-f]+), Semaphore: 0x([0-9a-f]+)\s+Arguments: ([^\n]*)",
                         out):
        notes.append((m.group(1), m.group(2), int(m.group(5), 16), m.group(6).strip()))
    return notes


def symbol_address(path, name):
    out = subprocess.run(["readelf", "-s", "-W", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[7] == name:
            return int(fields[1], 16)
    return None


def check_notes(args):
    with_probes = [args.full, args.minimal, args.static_minimal, args.static_full]
    for path in with_probes:
        notes = [n for n in stapsdt_notes(path) if n[0] == "otel_memory"]
        by_name = {}
        for provider, name, semaphore, arguments in notes:
            by_name.setdefault(name, []).append((semaphore, arguments))
        if sorted(by_name) != ["alloc", "free"]:
            fail("%s: otel_memory probes %s, expected alloc and free" % (path, sorted(by_name)))
        formats = {"alloc": r"8@\S+ 8@\S+ 8@\S+", "free": r"8@\S+"}
        for name, sites in by_name.items():
            want = symbol_address(path, "otel_memory_%s_semaphore" % name)
            for semaphore, arguments in sites:
                if not re.fullmatch(formats[name], arguments):
                    fail("%s: %s arguments %r" % (path, name, arguments))
                if semaphore == 0 or semaphore != want:
                    fail("%s: %s semaphore 0x%x, symbol at %s" % (path, name, semaphore, want))
        print("%s: %s" % (os.path.basename(path),
                          {n: [a for _, a in s] for n, s in sorted(by_name.items())}))
    if any(n[0] == "otel_memory" for n in stapsdt_notes(args.ondemand)):
        fail("the on-demand library has otel_memory probes")


GDB_SCRIPT = """\
set startup-with-shell off
set pagination off
set confirm off
{environment}
break main
run {log}
break -probe-stap otel_memory:alloc
commands
silent
printf "probe alloc %lu %lu %lu\\n", $_probe_arg0, $_probe_arg1, $_probe_arg2
continue
end
break -probe-stap otel_memory:free
commands
silent
printf "probe free %lu\\n", $_probe_arg0
continue
end
break Done
commands
silent
printf "probe done\\n"
kill
quit
end
continue
"""


def run_gdb(args, name, program, period, environment):
    workdir = os.path.join(args.workdir, name)
    os.makedirs(workdir, exist_ok=True)
    log = os.path.join(workdir, "truth.log")
    env_lines = "\n".join("set environment %s=%s" % kv for kv in environment.items())
    script = os.path.join(workdir, "probes.gdb")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT.format(environment=env_lines, log=log))
    r = subprocess.run(["gdb", "-nx", "-batch", "-x", script, program], capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, HOME=workdir))
    hits = [l.split()[1:] for l in r.stdout.splitlines() if l.startswith("probe ")]
    if ["done"] not in hits:
        fail("%s: gdb did not reach Done:\n%s\n%s" % (name, r.stdout[-3000:], r.stderr[-3000:]))
    allocs = [(int(h[1]), int(h[2]), int(h[3])) for h in hits if h[0] == "alloc"]
    frees = [int(h[1]) for h in hits if h[0] == "free"]

    sizes, freed = {}, set()
    with open(log) as f:
        for line in f:
            what, ptr, size = line.split()
            if what == "alloc":
                sizes[int(ptr)] = int(size)
            else:
                freed.add(int(ptr))
    sampled = set()
    expected_hits = 0.0
    for ptr, size, weight in allocs:
        if ptr not in sizes:
            fail("%s: alloc probe for %#x, which the program did not allocate" % (name, ptr))
        if size != sizes[ptr]:
            fail("%s: alloc probe size %d for %#x, the program asked for %d" % (name, size, ptr,
                                                                               sizes[ptr]))
        want = size if period <= 1 else size / -math.expm1(-size / period)
        if abs(weight - want) > 1:
            fail("%s: weight %d for %d bytes at period %d, expected %.1f" % (name, weight, size,
                                                                            period, want))
        if ptr in sampled:
            fail("%s: alloc probe twice for %#x" % (name, ptr))
        sampled.add(ptr)
    for ptr, size in sizes.items():
        expected_hits += 1 if period <= 1 else -math.expm1(-size / period)
    big = [p for p, s in sizes.items() if s == 64 << 20]
    if not big or big[0] not in sampled:
        fail("%s: the 64 MiB object fired no alloc probe" % name)
    # Sampled objects follow the sampling law: their number within 5 sigma of its mean.
    spread = 5 * math.sqrt(max(expected_hits, 1)) + 2
    if abs(len(sampled) - expected_hits) > spread:
        fail("%s: %d objects sampled, expected %.1f" % (name, len(sampled), expected_hits))
    ours = [p for p in frees if p in sizes]
    if len(ours) != len(set(ours)):
        fail("%s: a free probe fired twice for one object" % name)
    want_freed = sampled & freed
    if set(ours) != want_freed:
        fail("%s: free probes for %d of the program's objects, expected the %d sampled and freed "
             "(missing %s, extra %s)" % (name, len(ours), len(want_freed),
                                         sorted(want_freed - set(ours))[:3],
                                         sorted(set(ours) - want_freed)[:3]))
    print("%s: %d alloc hits (expected %.1f), %d free hits, weights and sizes match" %
          (name, len(sampled), expected_hits, len(ours)))


def check_gdb(args):
    if shutil.which("gdb") is None:
        skip("gdb is not installed (tests/scripts/install_deps.sh installs it)")
    period = 65536
    plain = {"TCMALLOC_SAMPLE_PARAMETER": str(period)}
    runs = [
        # Sampling on with nobody recording: the probes keep their own record of samples.
        ("preload_full", args.target, period, dict(plain, LD_PRELOAD=args.full)),
        ("preload_minimal", args.target, period, dict(plain, LD_PRELOAD=args.minimal)),
        ("static_minimal", args.static_minimal, period, plain),
        ("static_full", args.static_full, period, plain),
        # The heap profiler records the samples: its record tells the free path.
        ("preload_full_profiler", args.target, period,
         dict(plain, LD_PRELOAD=args.full, HEAPPROFILE=os.path.join(args.workdir, "prof"))),
        # Exact mode (every object; weight = size) through the profiler's side slots.
        ("preload_full_exact", args.target, 1,
         {"LD_PRELOAD": args.full, "TCMALLOC_SAMPLE_PARAMETER": "1",
          "HEAPPROFILE": os.path.join(args.workdir, "exact")}),
    ]
    for name, program, run_period, environment in runs:
        run_gdb(args, name, program, run_period, environment)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["notes", "gdb"])
    ap.add_argument("--full", required=True)
    ap.add_argument("--minimal", required=True)
    ap.add_argument("--ondemand", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--static-minimal", required=True)
    ap.add_argument("--static-full", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    for name in ("full", "minimal", "ondemand", "target", "static_minimal", "static_full",
                 "workdir"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    if shutil.which("readelf") is None:
        skip("readelf is not installed")
    if not any(n[0] == "otel_memory" for n in stapsdt_notes(args.full)):
        skip("the runtime was built without <sys/sdt.h> (systemtap-sdt-dev): no probes")
    os.makedirs(args.workdir, exist_ok=True)
    {"notes": check_notes, "gdb": check_gdb}[args.check](args)


if __name__ == "__main__":
    main()
