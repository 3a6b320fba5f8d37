#!/usr/bin/env python3
"""Does HEAP_PROFILE_LIFETIMES + HEAP_PROFILE_AGES move the sampled estimates of a CPython run?

Runs cpython_workload.py (deterministic: PYTHONHASHSEED=0, a seeded RNG) under
LD_PRELOAD=libheapkit.so with HEAPPROFILE and HEAP_PROFILE_PEAK=1, in SETTINGS (default: off =
no time settings, on = HEAP_PROFILE_LIFETIMES=1 HEAP_PROFILE_AGES=1), RUNS sampled runs of each
at RATE, interleaved (off, on, off, on, ...) so that load and drift hit both alike. Truth: exact
mode (TCMALLOC_SAMPLE_PARAMETER=1) with the same settings, run twice per setting to check it is
deterministic. Two estimates per run against the truth:
  peak:   the peak profile's estimated bytes (prof.peak.heap's comment line);
  in-use: the in-use bytes of the dump the workload takes at the top of its growth
          (prof.0001.heap), each line un-sampled as the pprofs do.
z = (estimate - truth) / sqrt(R * truth): sqrt(R * B) is the standard deviation of a
Horvitz-Thompson byte estimate of B bytes of objects much smaller than R (an upper bound for
larger ones, so |z| runs a little under 1). Prints per setting mean z +- standard error, the
relative bias, and the difference between settings in standard errors.
Usage: cpython_bias.py BUILD_DIR [--runs 40] [--rate 524288] [--settings off,on] [--work DIR]
                       [--python /usr/bin/python3] [--scale 60000] [--keep]
       cpython_bias.py - --pool WORK1/estimates.csv WORK2/estimates.csv ...   (summary only)
The environment passes through to the workload: PYTHONMALLOC=malloc sends CPython's small
objects to malloc too (by default pymalloc serves those of 512 bytes and less from its own
arenas, which it mmaps). Each sampled run appends its estimates and the truth to
WORK/estimates.csv, so that runs of several invocations (say two at once) can be pooled.
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../common"))
import legacy_dump  # noqa: E402

SETTINGS = {
    "off": {},
    "on": {"HEAP_PROFILE_LIFETIMES": "1", "HEAP_PROFILE_AGES": "1"},
    "lifetimes": {"HEAP_PROFILE_LIFETIMES": "1"},
    "ages": {"HEAP_PROFILE_AGES": "1"},
    "freestacks": {"HEAP_PROFILE_LIFETIMES": "1", "HEAP_PROFILE_FREE_STACKS": "1"},
}


# The estimates compared: the peak, the in-use bytes at the first interval dump (1 GiB
# allocated, HEAP_PROFILE_ALLOCATION_INTERVAL's default) and at the workload's own dump.
MEASURES = ("peak", "in-use at the 1 GiB dump", "in-use at the top dump")


def run(args, setting, rate, index):
    d = os.path.join(args.work, "%s-%s-%d" % (setting, "exact" if rate == 1 else "s", index))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("HEAP_PROFILE") or k in ("HEAPPROFILE", "TCMALLOC_SAMPLE_PARAMETER"):
            del env[k]
    env.update(SETTINGS[setting])
    env.update({
        "LD_PRELOAD": os.path.join(args.build, "libheapkit.so"),
        "HEAPPROFILE": os.path.join(d, "prof"),
        "HEAP_PROFILE_PEAK": "1",
        "TCMALLOC_SAMPLE_PARAMETER": str(rate),
        "PYTHONHASHSEED": "0",
    })
    subprocess.run([args.python, os.path.join(HERE, "cpython_workload.py"), str(args.scale)],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prefix = os.path.join(d, "prof")
    try:
        result = (legacy_dump.peak_estimate(prefix + ".peak.heap"),
                  *(legacy_dump.in_use_estimate(legacy_dump.dump_with_reason(prefix, reason))
                    for reason in ("1024 MB allocated cumulatively", "top of the growth")))
    except legacy_dump.DumpError as e:
        raise SystemExit(str(e))
    if not args.keep:
        shutil.rmtree(d)
    return result


def mean_se(values):
    m = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else float("nan")
    return m, se


def summarize(rate, settings, raw, truth):
    """Mean z per setting and measure, and each setting's difference from the first."""
    z = {s: tuple([(e - truth[s][k]) / math.sqrt(rate * truth[s][k]) for e in raw[s][k]]
                  for k in range(len(MEASURES))) for s in settings}
    runs = ", ".join("%s %d" % (s, len(raw[s][0])) for s in settings)
    print("rate %d, runs per setting: %s; z = (estimate - exact) / sqrt(R * exact)" % (rate, runs))
    for k, name in enumerate(MEASURES):
        print(name + ":")
        for s in settings:
            m, se = mean_se(z[s][k])
            sd = statistics.stdev(z[s][k]) if len(z[s][k]) > 1 else float("nan")
            rel = statistics.fmean(raw[s][k]) / truth[s][k] - 1
            print("  %-10s truth %11.0f  mean z %+.3f +- %.3f  sd z %.3f  mean estimate %+.2f %%" %
                  (s, truth[s][k], m, se, sd, 100 * rel))
        base = settings[0]
        for s in settings[1:]:
            m0, se0 = mean_se(z[base][k])
            m1, se1 = mean_se(z[s][k])
            print("  %s - %s: %+.3f +- %.3f (%.1f sigma)" %
                  (s, base, m1 - m0, math.hypot(se0, se1), (m1 - m0) / math.hypot(se0, se1)))


def pooled(paths):
    """raw and truth from estimates.csv files of earlier runs (--pool)."""
    raw, truth, settings = {}, {}, []
    n = len(MEASURES)
    for path in paths:
        with open(path) as f:
            for line in f:
                fields = line.strip().split(",")
                s, values = fields[0], [float(v) for v in fields[1:]]
                if s not in raw:
                    settings.append(s)
                    raw[s] = tuple([] for _ in MEASURES)
                    truth[s] = tuple(values[n:])
                # Each invocation has its own exact run (its environment differs by a few
                # bytes): an estimate is pooled as its error added to the first truth.
                for k in range(n):
                    raw[s][k].append(values[k] - values[n + k] + truth[s][k])
    return settings, raw, truth


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rate", type=int, default=524288)
    ap.add_argument("--settings", default="off,on")
    ap.add_argument("--work", default="/tmp/heapkit-cpython-bias")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--scale", type=int, default=60000)
    ap.add_argument("--keep", action="store_true", help="keep each run's profiles")
    ap.add_argument("--pool", nargs="+", metavar="CSV",
                    help="only summarize the estimates.csv files of earlier runs")
    args = ap.parse_args()
    if args.pool:
        settings, raw, truth = pooled(args.pool)
        summarize(args.rate, settings, raw, truth)
        return
    settings = args.settings.split(",")
    os.makedirs(args.work, exist_ok=True)

    truth = {}
    for s in settings:
        a = run(args, s, 1, 0)
        b = run(args, s, 1, 1)
        print("exact %-10s %s" % (s, "  ".join("%.0f %.0f" % (a[k], b[k]) for k in range(len(a)))))
        if a != b:
            print("  warning: exact mode differs between runs: truth is their mean")
        truth[s] = tuple((x + y) / 2 for x, y in zip(a, b))
    sys.stdout.flush()

    raw = {s: tuple([] for _ in MEASURES) for s in settings}
    for i in range(args.runs):
        for s in settings:
            est = run(args, s, args.rate, i)
            with open(os.path.join(args.work, "estimates.csv"), "a") as f:  # for pooling runs
                f.write(",".join([s] + ["%.0f" % v for v in est + truth[s]]) + "\n")
            for k in range(len(MEASURES)):
                raw[s][k].append(est[k])
        if (i + 1) % 10 == 0:
            print("runs %d" % (i + 1), file=sys.stderr)

    summarize(args.rate, settings, raw, truth)

if __name__ == "__main__":
    main()
