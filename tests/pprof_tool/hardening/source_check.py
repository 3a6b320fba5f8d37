#!/usr/bin/env python3
"""--list and the web UI's source view read only the source files they should (source_files.h).

A profile.proto whose functions "live in" /etc/passwd, /etc/shadow, ../../../../etc/passwd
(relative, climbing out of the current directory) and a link under --source_path pointing at
/etc/passwd: the listing shows the routine and "(source not available: ...)", never a line of
those files, on the CLI and at /ui/source. Files the user points at are shown: a relative name
under --source_path, an absolute one under it, and a build path cut by --trim_path. A 2 GiB
sparse "source" under --source_path is refused from its size at once ("larger than 16 MiB"),
with the time and max RSS printed.
Usage: source_check.py <pprof-tool> <work dir>
"""
import os
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import hostile  # noqa: E402
from driver_checks import fail, verdict  # noqa: E402

pprof, work = [os.path.abspath(a) for a in sys.argv[1:3]]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "src", "deep", "er"))


SECRET = ["root:", "daemon:"]  # first fields of /etc/passwd and /etc/shadow lines
with open(os.path.join(work, "src", "ok.cc"), "w") as f:
    f.write("// line 1\nint Allocate() {  // line 2 MARKER\n  return 0;\n}\n")
os.symlink("/etc/passwd", os.path.join(work, "src", "link.cc"))
big = os.path.join(work, "src", "big.cc")
with open(big, "wb") as f:
    f.truncate(2 << 30)

hostile_prof = os.path.join(work, "hostile.pb")
hostile.proto_profile(hostile_prof, [("app::Passwd", "/etc/passwd", 1), ("app::Shadow", "/etc/shadow", 1),
                                     ("app::Climb", "../../../../../../../../etc/passwd", 1),
                                     ("app::Link", os.path.join(work, "src", "link.cc"), 1)])
good_prof = os.path.join(work, "good.pb")
hostile.proto_profile(good_prof, [("app::Rel", "src/ok.cc", 2), ("app::Abs", os.path.join(work, "src/ok.cc"), 2),
                                  ("app::Trim", "/build/proj/src/ok.cc", 2), ("app::Big", big, 1)])


def listing(extra, prof, cwd):
    rc, out, err, secs, rss = hostile.run([pprof, "--list=.", *extra, prof], 60)
    return rc, out + err, secs, rss


# Hostile names, from a directory deep under work (so ../ climbs out of it) and with
# --source_path=work/src.
for cwd_dir, extra in [(os.path.join(work, "src", "deep", "er"), []),
                       (work, ["--source_path=" + os.path.join(work, "src")])]:
    os.chdir(cwd_dir)
    rc, out, secs, rss = listing(extra, hostile_prof, cwd_dir)
    if rc != 0 or any(s in out for s in SECRET) or out.count("source not available") != 4:
        fail("hostile names %s: want 4 routines without their files, got %s:\n%s" % (extra, rc, out[:1500]))
os.chdir(work)

rc, out, secs, rss = listing(["--source_path=" + work, "--trim_path=/build/proj"], good_prof, work)
if rc != 0 or out.count("MARKER") != 3:
    fail("files under --source_path: want app::Rel, app::Abs and app::Trim shown, got %s:\n%s" % (rc, out[:2000]))
if "larger than 16 MiB" not in out:
    fail("2 GiB sparse source: want 'larger than 16 MiB':\n%s" % out[:2000])
print("--list with a 2 GiB sparse source among 4 files: %.2f s, max RSS %.0f MiB" % (secs, rss))
if secs > 10 or rss > 200:
    fail("2 GiB sparse source: %.1f s, %.0f MiB max RSS" % (secs, rss))

server = subprocess.Popen([pprof, "--http=127.0.0.1:0", "--no_browser", hostile_prof],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
try:
    port = int(server.stdout.readline().decode().rsplit(":", 1)[1])
    for q in ["", "?f=Passwd", "?f=Shadow", "?f=Climb", "?f=Link"]:
        with urllib.request.urlopen("http://127.0.0.1:%d/ui/source%s" % (port, q), timeout=30) as r:
            body = r.read().decode("utf-8", "replace")
        if any(s in body for s in SECRET) or "source not available" not in body:
            fail("/ui/source%s shows a file the profile names:\n%s" % (q, body[-1500:]))
finally:
    server.kill()
    server.wait()
sys.exit(verdict('source file'))
