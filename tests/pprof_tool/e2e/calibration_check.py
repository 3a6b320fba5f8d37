#!/usr/bin/env python3
"""Calibration of pprof-tool's 95 % intervals (model/estimate.h) against exact mode.

Each workload of calibration_prog (a compiler-like tree builder, a cache with churn, a
multi-threaded service) is deterministic for its seed: one exact run (TCMALLOC_SAMPLE_PARAMETER=1)
gives every function's true in-use bytes and objects at the exit dump, and sampled runs at each
rate give estimates with intervals (`--top --error_bars`). Per function expected to have at
least 10 samples: z = (estimate - truth) / sigma. Prints coverage (|z| < 2) and rms z per
workload and pooled, for in-use bytes (held to the bands) and objects (printed: a function's
count rests on its smallest objects' few heavy samples when its sizes spread, see
tests/pprof_tool/unit/estimate_test.cc), and fails outside the bands.

usage: calibration_check.py <pprof-tool> <libheapkit.so> <calibration_prog> <work dir>
         [--seeds N] [--rates R1,R2,...] [--time_settings off,on,lifetimes,ages,peak]
         [--coverage LO:HI]
         [--rms LO:HI] [--results FILE]
The ctest (quick) runs 6 seeds x 2 rates (186 functions) with bands a calibrated estimator
leaves about once in a thousand runs: over 26 runs of 93 functions each, pooled coverage was
0.934 +- 0.031 and rms z 1.05 +- 0.11 (the z's of one run are correlated, so the run-to-run
spread is wider than binomial), and the bands are 3.3 of those spreads, scaled to 186, either
side. They catch intervals a third too narrow or too wide; tests/bench/pprof/calibration.sh runs
the full grid with the 93-97 % / 0.9-1.1 bands.
"""
import argparse
import math
import os
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("pprof")
ap.add_argument("lib")
ap.add_argument("prog")
ap.add_argument("work")
ap.add_argument("--seeds", type=int, default=6)
ap.add_argument("--rates", default="65536,524288")
ap.add_argument("--workloads", default="tree,cache,service")
ap.add_argument("--time_settings", default="off")
ap.add_argument("--coverage", default="0.86:1.0")
ap.add_argument("--rms", default="0.78:1.32")
ap.add_argument("--min_samples", type=float, default=10)
ap.add_argument("--results", default="")
# derived: each dump is read without its `# heapkit: variance` lines, so pprof-tool computes the
# variance at each row's mean size as for files that do not record it (the comparison).
ap.add_argument("--variance", choices=("recorded", "derived"), default="recorded")
A = ap.parse_args()
os.makedirs(A.work, exist_ok=True)

# --time_settings: off, all three on, or one of them alone.
TIME_ENV = {"off": {}, "on": {"HEAP_PROFILE_LIFETIMES": "1", "HEAP_PROFILE_AGES": "1",
                              "HEAP_PROFILE_PEAK": "1"},
            "lifetimes": {"HEAP_PROFILE_LIFETIMES": "1"}, "ages": {"HEAP_PROFILE_AGES": "1"},
            "peak": {"HEAP_PROFILE_PEAK": "1"}}


def profile(workload, seed, rate, settings, tag):
    prefix = os.path.join(A.work, "%s.%d.%s.%s" % (workload, seed, rate, tag))
    for f in os.listdir(A.work):
        if f.startswith(os.path.basename(prefix) + "."):
            os.unlink(os.path.join(A.work, f))
    env = dict(os.environ, HEAPPROFILE=prefix, TCMALLOC_SAMPLE_PARAMETER=str(rate),
               LD_PRELOAD=A.lib)
    env.update(TIME_ENV[settings])
    subprocess.run([A.prog, workload, str(seed)], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # The exit dump: the last one (a large run also dumps on its way, at 1 GiB allocated).
    numbered = sorted(f for f in os.listdir(A.work)
                      if re.fullmatch(re.escape(os.path.basename(prefix)) + r"\.\d{4}\.heap", f))
    if not numbered:
        sys.exit("FAIL: no dump %s.NNNN.heap" % prefix)
    path = os.path.join(A.work, numbered[-1])
    if A.variance == "derived" and rate > 1:
        with open(path) as f:
            kept = [l for l in f if not l.startswith("# heapkit: variance ")]
        path += ".derived"
        with open(path, "w") as f:
            f.writelines(kept)
    return path


ROW = re.compile(r"^\s*(-?\d+)\s+(±-?\d+|0)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(.*)$")


def rows(dump, objects):
    """name -> (flat, sigma) of --top --error_bars --show_bytes --full_names, all nodes."""
    args = [A.pprof, "--top", "--error_bars", "--show_bytes", "--full_names", "--nodefraction=0",
            A.prog, dump]
    if objects:
        args.insert(1, "--inuse_objects")
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            sigma = float(m.group(2).lstrip("±")) / 2 if m.group(2) != "0" else 0.0
            result[m.group(3)] = (float(m.group(1)), sigma)
    total = re.search(r"of (\d+) total(?: \(± (\d+) at 95 %\))?", out)
    result["<total>"] = (float(total.group(1)), float(total.group(2) or 0) / 2)
    return result


class Score:
    def __init__(self):
        self.n = 0
        self.covered = 0
        self.z2 = 0.0

    def add(self, estimate, sigma, truth):
        if sigma > 0:
            z = (estimate - truth) / sigma
        else:
            z = 0.0 if estimate == truth else 99.0
        self.n += 1
        self.covered += abs(z) < 2
        self.z2 += z * z

    def merge(self, o):
        self.n += o.n
        self.covered += o.covered
        self.z2 += o.z2

    def text(self):
        if self.n == 0:
            return "no functions"
        return "%4d z: coverage %.3f, rms z %.3f" % (self.n, self.covered / self.n,
                                                    math.sqrt(self.z2 / self.n))


def expected_samples(bytes_, objects, rate):
    if objects <= 0 or bytes_ <= 0:
        return 0
    return objects * (1 - math.exp(-(bytes_ / objects) / rate))


# Interval widths beside the observed spread: per (settings, workload, rate) and figure (the
# total, the largest function), the reported 2 sigma averaged over seeds and 2 x the rms of
# estimate - truth over the same runs.
spread = {}


def add_spread(key, estimate, sigma, truth):
    s = spread.setdefault(key, [0, 0.0, 0.0])
    s[0] += 1
    s[1] += 2 * sigma
    s[2] += (estimate - truth) ** 2


truths = {}  # (workload, seed) -> the exact run's rows (bytes, objects): one run per seed


def truth(workload, seed):
    if (workload, seed) not in truths:
        exact = profile(workload, seed, 1, "off", "exact")
        truths[(workload, seed)] = (rows(exact, False), rows(exact, True))
    return truths[(workload, seed)]


rates = [int(r) for r in A.rates.split(",")]
pooled = Score()
pooled_objects = Score()
totals = Score()
lines = []
for settings in A.time_settings.split(","):
    for workload in A.workloads.split(","):
        per = Score()
        per_objects = Score()
        for seed in range(1, A.seeds + 1):
            truth_b, truth_n = truth(workload, seed)
            for rate in rates:
                dump = profile(workload, seed, rate, settings, "s")
                est_b = rows(dump, False)
                est_n = rows(dump, True)
                for name, (tb, _) in truth_b.items():
                    if name == "<total>":
                        continue
                    tn = truth_n.get(name, (0, 0))[0]
                    if expected_samples(tb, tn, rate) < A.min_samples:
                        continue
                    eb, sb = est_b.get(name, (0.0, 0.0))
                    per.add(eb, sb, tb)
                    en, sn = est_n.get(name, (0.0, 0.0))
                    per_objects.add(en, sn, tn)
                tb, _ = truth_b["<total>"]
                eb, sb = est_b["<total>"]
                totals.add(eb, sb, tb)
                add_spread((settings, workload, rate, "total"), eb, sb, tb)
                top = max((n for n in truth_b if n != "<total>"), key=lambda n: truth_b[n][0])
                eb, sb = est_b.get(top, (0.0, 0.0))
                add_spread((settings, workload, rate, "largest function"), eb, sb,
                           truth_b[top][0])
        line = "%-8s time settings %-3s seeds %d rates %s: bytes %s; objects %s" % (
            workload, settings, A.seeds, A.rates, per.text(), per_objects.text())
        print(line)
        lines.append(line)
        pooled.merge(per)
        pooled_objects.merge(per_objects)
line = "pooled: functions' bytes %s; objects %s; totals %s" % (
    pooled.text(), pooled_objects.text(), totals.text())
print(line)
lines.append(line)
lines.append("")
lines.append("| settings | workload | rate | figure | runs | mean reported ±2σ | observed 2 × rms error |")
lines.append("|---|---|---|---|---|---|---|")
for (settings, workload, rate, figure), (n, width, err2) in sorted(spread.items()):
    lines.append("| %s | %s | %d | %s | %d | %.2f MB | %.2f MB |" % (
        settings, workload, rate, figure, n, width / n / 1048576,
        2 * math.sqrt(err2 / n) / 1048576))
print("\n".join(lines[-len(spread) - 3:]))
if A.results:
    with open(A.results, "w") as f:
        f.write("\n".join(lines) + "\n")
lo, hi = (float(x) for x in A.coverage.split(":"))
rlo, rhi = (float(x) for x in A.rms.split(":"))
coverage = pooled.covered / max(1, pooled.n)
rms = math.sqrt(pooled.z2 / max(1, pooled.n))
if pooled.n < 40:
    sys.exit("FAIL: only %d functions with enough samples" % pooled.n)
if not (lo <= coverage <= hi) or not (rlo <= rms <= rhi):
    sys.exit("FAIL: coverage %.3f (want %s), rms z %.3f (want %s)" % (coverage, A.coverage, rms,
                                                                      A.rms))
print("PASS")
