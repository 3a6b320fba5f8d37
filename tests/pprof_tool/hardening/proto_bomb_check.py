#!/usr/bin/env python3
"""profile.proto memory bombs: repeated fields nested in samples and locations.

Each file below is read by `pprof-tool --text`: it must end within 20 s with exit 0, or exit 2
and one line, and its peak RSS (wait4's ru_maxrss) must stay within 32 x the decompressed size
+ 32 MiB (proto/nested_counts.h, ProtoLimits). Before the nested counts: 4 MB of location ids in
one sample took 224 MB, 4 MB of empty labels 180 MB, 1.5 MB of Lines naming a 4 KiB function
2.1 GB and 20 s. Prints size, time, RSS and ratio of each.
Usage: proto_bomb_check.py <pprof-tool> <work dir>
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import hostile  # noqa: E402
from driver_checks import fail, fresh_dir, verdict  # noqa: E402

pprof, work = [os.path.abspath(a) for a in sys.argv[1:3]]
fresh_dir(work)


bombs = {
    "ids_one_sample": lambda p: hostile.proto_bomb(p, "location_ids", 4 << 20),
    "labels_one_sample": lambda p: hostile.proto_bomb(p, "labels", 2 << 20),
    "lines_one_location": lambda p: hostile.proto_bomb(p, "lines", 1 << 18),
    "ids_64_samples_at_cap": lambda p: hostile.proto_spread_bomb(p, "location_ids", 65536, 64),
    "lines_1000_locations_at_cap": lambda p: hostile.proto_spread_bomb(p, "lines", 1024, 1000),
}
for name, make in bombs.items():
    path = os.path.join(work, name + ".pb")
    make(path)
    size = os.path.getsize(path)
    t0 = time.monotonic()
    p = subprocess.Popen([pprof, "--text", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        fail("%s: no answer in 20 s" % name)
        continue
    # communicate() reaps the child without its rusage: a second run, reaped by wait4, gives
    # this file's own peak RSS (RUSAGE_CHILDREN would be the largest of all runs so far).
    secs = time.monotonic() - t0
    q = subprocess.Popen([pprof, "--text", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(q.pid, 0)
    q.returncode = 0  # reaped above; keeps Popen from waiting again
    rss = usage.ru_maxrss * 1024
    bound = 32 * size + (32 << 20)
    lines = err.decode("utf-8", "replace").strip().splitlines()
    print("%-28s %6.1f MB  exit %d  %5.2f s  max RSS %6.1f MB  (%.1fx)  %s"
          % (name, size / 1e6, p.returncode, secs, rss / 1e6, rss / size, lines[-1][:90] if lines else ""))
    if p.returncode not in (0, 2) or (p.returncode == 2 and len(lines) != 1):
        fail("%s: exit %d, %r" % (name, p.returncode, lines[:3]))
    if rss > bound:
        fail("%s: max RSS %.0f MB above 32 x %.1f MB + 32 MiB" % (name, rss / 1e6, size / 1e6))
sys.exit(verdict('profile.proto memory bomb'))
