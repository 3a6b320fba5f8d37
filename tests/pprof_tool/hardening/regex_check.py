#!/usr/bin/env python3
"""Every regex option of pprof-tool on hostile patterns and megabyte-long names.

The filters are RE2 (Go's regexp, as go pprof's): a catastrophic pattern such as `(.+)+#` runs in
linear time and a 900,000-character name cannot exhaust the stack. For every CLI option
(--focus --ignore --hide --show --show_from --drop_frames --peek --list) and every web UI filter
(f i h s sf on /ui/top, /ui/peek, /ui/source, /ui/flamegraph, /ui/): the answer comes within the
time bound, pprof-tool does not crash, and a bad pattern gives one line. Also checks Go's
syntax (RE2 classes such as \\pL and (?i)) works on the CLI. Prints time and max RSS.
Usage: regex_check.py <pprof-tool> <work dir>
"""
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import hostile  # noqa: E402
from driver_checks import fail, fresh_dir, verdict  # noqa: E402

pprof, work = sys.argv[1:3]
fresh_dir(work)
BOUND = 20.0  # seconds per command; each takes well under one here (std::regex: minutes or SIGSEGV)


LONG = "a" * 900_000  # a megabyte-class name (lines of a legacy file stop at 1 MiB)
prof = os.path.join(work, "long.heap")
hostile.raw_profile(prof, [LONG + "::Run", "x" * 50 + "Leaf", "OtherLeaf"])

EVIL = "(.+)+#"
cases = []
for opt in ["focus", "ignore", "hide", "show", "show_from", "drop_frames"]:
    cases.append(["--text", "--%s=%s" % (opt, EVIL)])
    cases.append(["--text", "--%s=.*" % opt])
cases += [["--peek=" + EVIL], ["--peek=.*"], ["--tree"], ["--list=" + EVIL], ["--list=.*"],
          ["--traces", "--focus=(a|aa)+$"]]
worst = 0.0
for extra in cases:
    rc, out, err, secs, rss = hostile.run([pprof] + extra + [prof], BOUND)
    worst = max(worst, secs)
    what = " ".join(extra)
    if rc is None:
        fail("%s: no answer in %.0f s" % (what, BOUND))
    elif rc < 0:
        fail("%s: killed by signal %d" % (what, -rc))
    elif rc not in (0, 2):
        fail("%s: exit %d: %s" % (what, rc, err[:200]))
    elif rc == 2 and len(err.strip().splitlines()) != 1:
        fail("%s: exit 2 without one line: %r" % (what, err[:300]))
print("CLI: %d commands on a 900,000-character name, slowest %.2f s, max RSS %.0f MiB"
      % (len(cases), worst, rss))

# Go's regexp syntax (RE2) works; ECMAScript-only syntax (look-ahead) is a one-line error.
rc, out, err, _, _ = hostile.run([pprof, "--text", r"--focus=(?i)OTHERleaf", prof], BOUND)
if rc != 0 or "OtherLeaf" not in out or "Leaf\n" in out.replace("OtherLeaf", ""):
    fail("(?i) (Go syntax) did not focus on OtherLeaf: %d %s %s" % (rc, out[-300:], err))
rc, out, err, _, _ = hostile.run([pprof, "--text", r"--focus=Other(?=Leaf)", prof], BOUND)
if rc != 2 or "--focus=Other(?=Leaf): invalid regular expression" not in err or len(err.splitlines()) != 1:
    fail("look-ahead: want one line 'invalid regular expression', got %d %r" % (rc, err))

# The web UI: every view with every filter parameter.
server = subprocess.Popen([pprof, "--http=127.0.0.1:0", "--no_browser", prof],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
try:
    line = server.stdout.readline().decode()
    port = int(line.rsplit(":", 1)[1])
    worst = 0.0
    n = 0
    for view in ["/ui/top", "/ui/peek", "/ui/source", "/ui/flamegraph", "/ui/"]:
        for param in ["f", "i", "h", "s", "sf"] if view != "/ui/" else ["f"]:
            # The call graph lays out the 900,000-character label in graphviz (seconds per
            # request, not a regex matter): one pattern there keeps the test short.
            for pat in [EVIL, ".*", "(", "a"] if view != "/ui/" else [EVIL]:
                q = urllib.parse.quote(pat)
                t0 = time.monotonic()
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d%s?%s=%s" % (port, view, param, q),
                                                timeout=BOUND) as r:
                        status, body = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, body = e.code, e.read()
                except Exception as e:  # noqa: BLE001 - timeout, reset: all failures
                    fail("%s?%s=%s: %s" % (view, param, pat, e))
                    continue
                secs = time.monotonic() - t0
                worst = max(worst, secs)
                n += 1
                if status >= 500 or (pat == "(" and (status != 400 or b"invalid regular expression" not in body)):
                    fail("%s?%s=%s: status %d %r" % (view, param, pat, status, body[:200]))
                if server.poll() is not None:
                    fail("server died on %s?%s=%s (exit %s)" % (view, param, pat, server.returncode))
                    raise SystemExit
    print("web: %d requests, slowest %.2f s" % (n, worst))
    server.send_signal(signal.SIGTERM)
    if server.wait(timeout=20) != 0:
        fail("server exit %d after SIGTERM" % server.returncode)
finally:
    if server.poll() is None:
        server.kill()
    server.wait()
sys.exit(verdict('hostile regex'))
