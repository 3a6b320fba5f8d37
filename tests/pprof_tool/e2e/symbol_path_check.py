#!/usr/bin/python3
"""Profiles symbolized on "another machine": the binary the profile recorded is gone, replaced
or stripped, and pprof-tool finds it through --symbol_path / PPROF_BINARY_PATH.

  symbol_path_check.py <pprof-tool> <libheapkit.so> <program> <dir with profile_pb2.py> <work>

1. The recorded binary moved away: no names at first; names from --symbol_path, from
   PPROF_BINARY_PATH, and from both (the flag's directories first).
2. A different binary under the same base name in the symbol path: refused with one line
   (segments for a legacy profile; the recorded build-id for a profile.proto), never its names.
3. A stripped binary and its debug file in <dir>/.build-id/xx/yyyy.debug: names and lines.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys

pprof, lib, program, pygen, work = sys.argv[1:6]
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)


def run_pprof(args, env_extra=None):
    env = dict(os.environ)
    env.pop("PPROF_BINARY_PATH", None)
    env.pop("DEBUGINFOD_URLS", None)
    env.update(env_extra or {})
    r = subprocess.run([pprof] + args, env=env, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "%s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r.stdout, [l for l in r.stderr.splitlines() if l]


def profile(binary, prefix):
    env = dict(os.environ, HEAPPROFILE=prefix, TCMALLOC_SAMPLE_PARAMETER="1", LD_PRELOAD=lib)
    subprocess.run([binary], env=env, check=True, timeout=60)
    dumps = sorted(f for f in os.listdir(os.path.dirname(prefix)) if f.endswith(".heap"))
    return os.path.join(os.path.dirname(prefix), dumps[-1])


def dirs(*names):
    out = []
    for n in names:
        d = os.path.join(work, n)
        os.makedirs(d, exist_ok=True)
        out.append(d)
    return out


NAME = "remote_site::KeepLargeBlock"
shutil.rmtree(work, ignore_errors=True)
run_dir, syms, empty, wrong, prof_dir = dirs("run", "syms", "empty", "wrong", "prof")
binary = os.path.join(run_dir, "remote_prog")
shutil.copy(program, binary)
heap = profile(binary, os.path.join(prof_dir, "p"))
# A profile.proto of the same dump, written while the binary is in place (it records the
# build-id), with its symbols removed as a profiling agent would send it.
run_pprof(["--proto", "-o", os.path.join(work, "full.pb.gz"), heap])
sys.path.insert(0, pygen)
try:
    import profile_pb2
    p = profile_pb2.Profile()
    p.ParseFromString(gzip.decompress(open(os.path.join(work, "full.pb.gz"), "rb").read()))
    recorded = [m for m in p.mapping if p.string_table[m.filename] == binary]
    check(len(recorded) == 1 and p.string_table[recorded[0].build_id] != "",
          "the proto profile records no build-id for %s" % binary)
    for loc in p.location:
        del loc.line[:]
    del p.function[:]
    for m in p.mapping:
        m.has_functions = m.has_filenames = m.has_line_numbers = m.has_inline_frames = False
    bare = os.path.join(work, "bare.pb.gz")
    open(bare, "wb").write(gzip.compress(p.SerializeToString()))
except ImportError as e:
    bare = None
    print("note: python protobuf missing (%s): the build-id refusal of a proto is not checked" % e)
shutil.move(binary, os.path.join(syms, "remote_prog"))

# 1. Moved away.
out, err = run_pprof(["--text", heap])
check(NAME not in out, "binary moved away, no symbol path: still named?\n" + out)
check(any("remote_prog" in l for l in err), "binary moved away: no warning: %s" % err)
for what, args, env in (
        ("--symbol_path", ["--symbol_path=" + syms], {}),
        ("PPROF_BINARY_PATH", [], {"PPROF_BINARY_PATH": syms}),
        ("--symbol_path and PPROF_BINARY_PATH combined", ["--symbol_path=" + empty],
         {"PPROF_BINARY_PATH": empty + ":" + syms}),
        ("relative --symbol_path", ["--symbol_path=" + os.path.relpath(syms)], {})):
    out, err = run_pprof(["--text"] + args + [heap], env)
    check(NAME in out, "%s: %s not named:\n%s\n%s" % (what, NAME, out, err))
    check(not any("remote_prog" in l for l in err), "%s: warnings %s" % (what, err))

# 2. A different binary under the same base name.
shutil.copy("/bin/true", os.path.join(wrong, "remote_prog"))
out, err = run_pprof(["--text", "--symbol_path=" + wrong, heap])
check(len(err) == 1 and re.match(r"pprof-tool: warning: .*/wrong/remote_prog: does not match the "
                                 r"profile's memory map", err[0]) is not None,
      "wrong binary in the symbol path (legacy profile): want one line, got %s" % err)
check(NAME not in out and "remote_prog+0x" in out, "wrong binary: names\n" + out)
# The flag's directory wins over PPROF_BINARY_PATH's, without a word about the latter.
out, err = run_pprof(["--text", "--symbol_path=" + syms, heap], {"PPROF_BINARY_PATH": wrong})
check(NAME in out and not err, "flag before env: %s\n%s" % (out, err))
if bare:
    out, err = run_pprof(["--text", "--symbol_path=" + wrong, bare])
    check(len(err) == 1 and re.match(r"pprof-tool: warning: .*/wrong/remote_prog: build-id "
                                     r"[0-9a-f]+ differs from the profile's [0-9a-f]+; its "
                                     r"addresses are shown as remote_prog\+0x<offset>$", err[0]),
          "wrong build-id in the symbol path (proto): want one line, got %s" % err)
    check(NAME not in out, "wrong build-id: named anyway\n" + out)
    out, err = run_pprof(["--text", "--symbol_path=" + wrong + ":" + syms, bare])
    check(NAME in out and not err, "proto, right binary after a wrong one: %s\n%s" % (out, err))

# 3. Stripped binary at the recorded path, debug file by build-id under the symbol path.
debug_root, = dirs("debug")
shutil.copy(program, binary)
build_id = re.search(r"Build ID: ([0-9a-f]+)",
                     subprocess.check_output(["readelf", "-n", binary], text=True)).group(1)
id_dir = os.path.join(debug_root, ".build-id", build_id[:2])
os.makedirs(id_dir)
subprocess.check_call(["objcopy", "--only-keep-debug", binary,
                       os.path.join(id_dir, build_id[2:] + ".debug")])
subprocess.check_call(["strip", "--strip-all", binary])
out, err = run_pprof(["--text", heap])
check(NAME not in out, "stripped, no symbol path: named anyway\n" + out)
out, err = run_pprof(["--text", "--symbol_path=" + debug_root, heap])
check(NAME in out, "stripped + .build-id debug file: not named\n%s\n%s" % (out, err))
out, err = run_pprof(["--lines", "--text", "--symbol_path=" + debug_root, heap])
line = next(i + 1 for i, l in enumerate(open(os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "symbol_path_prog.cc"))) if "LARGE_BLOCK_LINE" in l)
check(re.search(r"symbol_path_prog\.cc:%d\b" % line, out) is not None,
      "stripped + debug file, --lines: no symbol_path_prog.cc:%d\n%s" % (line, out))

for e in errors:
    print("FAIL: " + e)
if not errors:
    print("PASS")
sys.exit(1 if errors else 0)
