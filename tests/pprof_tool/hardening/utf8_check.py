#!/usr/bin/env python3
"""Names that are not UTF-8, in both directions of profile.proto (proto/utf8.h).

  - a profile.proto whose string table holds Latin-1 names ("caf\\xe9::Run", a file
    "/src/gr\\xfc\\xdfe.cc"): pprof-tool reads it (protobuf's own parser refuses the message) and
    reports the function;
  - a legacy --raw profile with the Latin-1 symbol: --proto writes a file whose strings are valid
    UTF-8 ("café::Run"), pprof-tool reads its own export back, and `go tool pprof -top` (when
    installed) shows the same name.
Usage: utf8_check.py <pprof-tool> <work dir>
"""
import gzip
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import hostile  # noqa: E402
from driver_checks import fail, fresh_dir, verdict  # noqa: E402

pprof, work = [os.path.abspath(a) for a in sys.argv[1:3]]
fresh_dir(work)


LATIN1 = b"caf\xe9::Run"
pb = os.path.join(work, "latin1.pb")
hostile.proto_profile(pb, [(LATIN1, b"/src/gr\xfc\xdfe.cc", 3), ("app::Other", "/src/o.cc", 1)])
p = subprocess.run([pprof, "--text", pb], capture_output=True, timeout=60)
if p.returncode != 0 or LATIN1 not in p.stdout:
    fail("profile.proto with a Latin-1 string table: exit %d, %r %r" % (p.returncode, p.stdout[-300:], p.stderr))

raw = os.path.join(work, "latin1.heap")
with open(raw, "wb") as f:
    f.write(b"--- symbol\nbinary=latin1\n0x1000 " + LATIN1 + b"\n0x2000 main\n---\n"
            b"heap profile: 1: 100 [1: 100] @ heapprofile\n1: 100 [1: 100] @ 0x1000 0x2001\n")
out = os.path.join(work, "latin1.pb.gz")
p = subprocess.run([pprof, "--proto", "-o", out, raw], capture_output=True, timeout=60)
if p.returncode != 0:
    fail("--proto of a Latin-1 symbol: exit %d %r" % (p.returncode, p.stderr))
else:
    data = gzip.open(out).read()
    if LATIN1 in data or "café::Run".encode() not in data:
        fail("--proto: the string table should hold 'café::Run' in UTF-8")
    p = subprocess.run([pprof, "--text", out], capture_output=True, timeout=60)
    if p.returncode != 0 or "café::Run" not in p.stdout.decode("utf-8", "replace"):
        fail("its own --proto export does not read back: exit %d %r %r" % (p.returncode, p.stdout[-300:], p.stderr))
    go = shutil.which("go")
    if go:
        env = {"HOME": work, "PPROF_TMPDIR": work, "GOCACHE": os.path.join(work, "gocache"),
               "GOFLAGS": "", "GOPROXY": "off", "PATH": os.environ.get("PATH", "")}
        p = subprocess.run([go, "tool", "pprof", "-top", out], capture_output=True, timeout=120, env=env)
        if p.returncode != 0 or "café::Run" not in p.stdout.decode("utf-8", "replace"):
            fail("go tool pprof -top on the export: exit %d %r %r" % (p.returncode, p.stdout[-300:], p.stderr[-300:]))
        else:
            print("go tool pprof reads the export: café::Run")
sys.exit(verdict('UTF-8 name'))
