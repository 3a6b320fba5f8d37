#!/usr/bin/env python3
"""Cost of live leak checks asked back to back (/debug/pprof/leaks) to a service with a large
pointer-dense heap (live_service.cc), with and without requests.

  live_leaks.py --service <live_service> --heapkit <libheapkit.so> [--heap-mib 512]
                [--workers 2] [--seconds 75] [--rounds 1] [--env NAME=VALUE ...]
                [--before <an older libheapkit.so>]

Each round runs the service (LD_PRELOAD=libheapkit.so HEAPCHECK=normal HEAPKIT_HTTP) twice, or
three times with --before: without requests, then with a client that asks again as soon as each
answer comes (20 ms after a 429/503, so that the refusals' loop does not take the CPU from the
workers itself), reading /metrics after each check for its pause. The workers' allocation rate
(malloc+free pairs per second, the mean of the per-second figures after the first 5 s) is
compared; the client starts at 5 s, so the window holds its first check, which is always
admitted (the worst case for a window: checks at its start and every 20 durations after). Prints one table row per variant and the pause and duration per check.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

WARM_UP_SECONDS = 5


def run(args, library, with_client):
    env = dict(os.environ, LD_PRELOAD=library, HEAPCHECK="normal", HEAPKIT_HTTP="127.0.0.1:0")
    env.pop("TCMALLOC_SAMPLE_PARAMETER", None)
    for kv in args.env:
        name, _, value = kv.partition("=")
        env[name] = value
    proc = subprocess.Popen([args.service, str(args.heap_mib), str(args.workers),
                             str(args.seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    port = None
    for _ in range(8):
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stderr.readline())
        if m:
            port = m.group(1)
            break
    ready = proc.stdout.readline()
    if port is None or not ready.startswith("ready"):
        sys.exit("the service did not start: %r" % ready)
    url = "http://127.0.0.1:%s" % port
    stop = threading.Event()
    tally = {"200": 0, "429": 0, "503": 0, "other": 0}
    pauses, durations = [], []

    def client():
        while not stop.is_set():
            start = time.time()
            try:
                with urllib.request.urlopen(url + "/debug/pprof/leaks?debug=1", timeout=120) as r:
                    r.read()
                    status = r.status
            except urllib.error.HTTPError as e:
                e.read()
                status = e.code
            except OSError:
                break
            if status == 200:
                durations.append(time.time() - start)
                try:
                    with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
                        m = re.search(rb"^heapkit_leak_check_pause_seconds (\S+)$", r.read(), re.M)
                    if m:
                        pauses.append(float(m.group(1)))
                except OSError:
                    pass
                tally["200"] += 1
            else:
                tally[str(status) if str(status) in tally else "other"] += 1
                time.sleep(0.02)

    thread = threading.Thread(target=client, daemon=True)
    rates = []
    for line in proc.stdout:
        if line.startswith("rate "):
            rates.append(int(line.split()[1]))
            # The client's first request (always admitted) comes with the measured window.
            if len(rates) == WARM_UP_SECONDS and with_client:
                thread.start()
    stop.set()
    proc.wait()
    window = rates[WARM_UP_SECONDS:]
    return statistics.mean(window), tally, pauses, durations


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--service", required=True)
    ap.add_argument("--heapkit", required=True)
    ap.add_argument("--before")
    ap.add_argument("--heap-mib", type=int, default=512)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=75)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--env", action="append", default=[])
    args = ap.parse_args()
    variants = [("no requests", args.heapkit, False), ("requests back to back", args.heapkit, True)]
    if args.before:
        variants.append(("requests, --before library", args.before, True))
    print("| round | variant | steps/s | share of no-requests | checks (200/429/503) | "
          "pause per check s (min/median/max) | check as the client saw it s (median) |")
    print("|---|---|---|---|---|---|---|")
    for round_ in range(1, args.rounds + 1):
        base = None
        for name, library, with_client in variants:
            rate, tally, pauses, durations = run(args, library, with_client)
            base = base or rate
            pause = ("%.3f / %.3f / %.3f" % (min(pauses), statistics.median(pauses), max(pauses))
                     if pauses else "-")
            seen = "%.3f" % statistics.median(durations) if durations else "-"
            checks = "%d / %d / %d" % (tally["200"], tally["429"], tally["503"]) if with_client \
                else "-"
            print("| %d | %s | %.0f | %.1f %% | %s | %s | %s |" %
                  (round_, name, rate, 100 * rate / base, checks, pause, seen), flush=True)


if __name__ == "__main__":
    main()
