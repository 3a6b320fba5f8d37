"""Shared by the hardening checks: hostile profiles and a bounded pprof-tool runner."""
import os
import resource
import subprocess
import time


def raw_profile(path, names):
    """A --raw legacy profile (symbols embedded: no binary needed), one sample per name, each
    stack `name -> main`."""
    with open(path, "w") as f:
        f.write("--- symbol\nbinary=hostile\n")
        for i, name in enumerate(names):
            f.write("0x%x %s\n" % (0x1000 + 0x10 * i, name))
        f.write("0x%x main\n---\n" % 0x900000)
        f.write("heap profile: %d: %d [%d: %d] @ heapprofile\n"
                % (len(names), 100 * len(names), len(names), 100 * len(names)))
        for i in range(len(names)):
            f.write("1: 100 [1: 100] @ 0x%x 0x%x\n" % (0x1000 + 0x10 * i, 0x900001))


def run(cmd, timeout):
    """Runs cmd; returns (exit status or None on timeout, stdout, stderr, seconds, max RSS MiB
    of the children so far)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, "", "timeout"
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return rc, out, err, time.monotonic() - t0, rss
