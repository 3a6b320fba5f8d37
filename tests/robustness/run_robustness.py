#!/usr/bin/env python3
"""Bad input everywhere: every bad input of tests/robustness/README.md, end to end.

  run_robustness.py <group> --victim ... --victim-static ... --heapkit ... --minimal ...
                    --pprof ... --truncation-check ... --workdir DIR

Groups: env, dump_dir, full_disk, profiles, binaries, frees, sizes. For each bad input it
asserts the ONE line heapkit (or pprof-tool) prints (its text), that nothing crashes (no signal
unless an abort is the documented answer), that nothing hangs (every child has a timeout) and
that no data is lost (a failed dump never replaces a complete file). Exit 0 when all hold,
1 otherwise. A check that cannot run here (full_disk's tmpfs without root) says so in one line
and is left out; the group still runs.
"""
import argparse
import filecmp
import glob
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

A = None
FAILURES = []
CHECKS = 0

# Known bugs in code this test does not own: the check runs and must fail; the fix is
# described in tests/robustness/README.md ("Requested fixes"). When a fix lands, the check
# passes and this script fails with "XPASS": delete the entry then.
KNOWN_BUGS = {}


def check(cond, msg, bug=None):
    global CHECKS
    CHECKS += 1
    if bug is not None and bug in KNOWN_BUGS:
        if cond:
            FAILURES.append("XPASS (remove %s from KNOWN_BUGS): %s" % (bug, msg))
            print("XPASS", bug, msg)
        else:
            print("XFAIL (known bug %s: %s): %s" % (bug, KNOWN_BUGS[bug], msg))
        return cond
    if not cond:
        FAILURES.append(msg)
        print("FAIL:", msg)
    return cond


class Result:
    def __init__(self, argv, rc, out, err, seconds, timed_out):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.seconds, self.timed_out = seconds, timed_out

    @property
    def signal(self):
        return -self.rc if self.rc is not None and self.rc < 0 else 0

    def lines(self, prefix=None):
        ls = [l for l in self.err.splitlines() if l.strip()]
        return [l for l in ls if prefix is None or l.startswith(prefix)]

    def describe(self):
        err = "\n".join(l if len(l) < 300 else l[:150] + "<...>" + l[-100:]
                        for l in self.err.splitlines())
        return "%s: rc=%s%s\n  stdout: %r\n  stderr: %r" % (
            " ".join(self.argv)[:200], self.rc, " (TIMEOUT)" if self.timed_out else "",
            self.out[-400:], err[-1500:])


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not re.match(r"^(HEAP|TCMALLOC|PERFTOOLS|LD_PRELOAD|HEAPCHECK)", k)}
    env["DEBUGINFOD_URLS"] = ""
    return env


def run(argv, env=None, timeout=20, fsize=None, address_space=None, cwd=None):
    e = clean_env()
    e.update(env or {})

    def limits():
        os.setsid()
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    t0 = time.monotonic()
    # restore_signals (default) gives the child the default SIGXFSZ/SIGPIPE actions.
    p = subprocess.Popen(argv, env=e, cwd=cwd or A.workdir, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, preexec_fn=limits)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    r = Result(argv, p.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
               time.monotonic() - t0, timed_out)
    check(not timed_out, "hang (killed after %ds): %s" % (timeout, r.describe()))
    return r


def ran_normally(r, what, rc=0):
    """No signal, no hang, the program finished its work."""
    ok = check(r.signal == 0 and not r.timed_out, "%s: died by signal %d\n%s"
               % (what, r.signal, r.describe()))
    ok = ok and check("victim done" in r.out, "%s: program did not finish\n%s" % (what, r.describe()))
    if rc is not None:
        ok = ok and check(r.rc == rc, "%s: exit %s, want %d\n%s" % (what, r.rc, rc, r.describe()))
    return ok


def one_line(r, pattern, what, prefix="heapkit:", bug=None):
    """Exactly one stderr line starting with `prefix`, and it matches `pattern` (a regex)."""
    ls = r.lines(prefix)
    if len(ls) != 1:
        return check(False, "%s: want exactly one %r line, got %d\n%s"
                     % (what, prefix, len(ls), r.describe()), bug=bug)
    short = ls[0] if len(ls[0]) < 400 else ls[0][:200] + "<...>" + ls[0][-100:]
    return check(re.search(pattern, ls[0]) is not None,
                 "%s: line %r does not match %r" % (what, short, pattern[:300]), bug=bug)


def victim(flavour="full"):
    """(argv prefix, env) running the victim under one way of getting heapkit in."""
    if flavour == "full":
        return [A.victim], {"LD_PRELOAD": A.heapkit}
    if flavour == "minimal":
        return [A.victim], {"LD_PRELOAD": A.minimal}
    return [A.victim_static], {}


def fresh(name):
    d = os.path.join(A.workdir, name)
    if os.path.ismount(d):  # left mounted by a run that was killed
        subprocess.call(["umount", "-l", d])
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def leftovers(d):
    return glob.glob(os.path.join(d, "*.tmp.*"))


# ---------------------------------------------------------------------------------------------
# env: malformed values of every variable heapkit reads.

IGNORING = r"^heapkit: ignoring %s='%s': .+; using (the )?default"

# (variable, bad value, context): context "alloc" runs the plain program, "prof" with
# HEAPPROFILE, "check" with HEAPCHECK=normal, "as-is" with HEAPCHECK=as-is.
# The six TCMALLOC_* numbers are covered by alloc.e2e.override.*.bad_env_values; the profiler's
# HEAP_PROFILE_INUSE_INTERVAL and HEAPPROFILESIGNAL by profiler.e2e.*_bad_input.
ENV_CASES = [
    ("TCMALLOC_AGGRESSIVE_DECOMMIT", "sometimes", "alloc"),
    ("TCMALLOC_RELEASE_RATE", "1e999", "alloc"),
    ("TCMALLOC_SAMPLE_PARAMETER", "1x", "prof"),
    ("HEAP_PROFILE_ALLOCATION_INTERVAL", "abc", "prof"),
    ("HEAP_PROFILE_ALLOCATION_INTERVAL", "-5", "prof"),
    ("HEAP_PROFILE_ALLOCATION_INTERVAL", "10x", "prof"),
    ("HEAP_PROFILE_ALLOCATION_INTERVAL", "99999999999999999999", "prof"),
    ("HEAP_PROFILE_DEALLOCATION_INTERVAL", "-1", "prof"),
    ("HEAP_PROFILE_TIME_INTERVAL", "soon", "prof"),
    ("HEAP_PROFILE_TIME_INTERVAL", "-3", "prof"),
    ("HEAP_PROFILE_TIME_INTERVAL", "99999999999", "prof"),
    ("HEAP_PROFILE_STACK_DEPTH", "0", "prof"),
    ("HEAP_PROFILE_STACK_DEPTH", "65", "prof"),
    ("HEAP_PROFILE_STACK_DEPTH", "deep", "prof"),
    ("HEAPPROFILESIGNAL", "SIGUSR1", "prof"),
    ("PERFTOOLS_VERBOSE", "loud", "prof"),
    ("HEAP_CHECK_MAX_LEAKS", "many", "check"),
    ("HEAP_CHECK_IDENTIFY_LEAKS", "maybe", "check"),
    ("HEAP_CHECK_TEST_POINTER_ALIGNMENT", "2", "check"),
    ("HEAP_CHECK_POINTER_SOURCE_ALIGNMENT", "3", "check"),
    ("HEAP_CHECK_POINTER_SOURCE_ALIGNMENT", "16", "check"),
    ("HEAP_CHECK_MAX_POINTER_OFFSET", "-2", "check"),
    ("HEAP_CHECK_ERROR_EXIT_CODE", "256", "check"),
    ("HEAP_CHECK_ERROR_EXIT_CODE", "one", "check"),
    ("HEAP_CHECK_SUSPEND_SIGNAL", "9", "check"),
    ("HEAP_CHECK_STOP_TIMEOUT_MS", "0", "check"),
    ("HEAP_CHECK_STOP_TIMEOUT_MS", "forever", "check"),
    ("HEAP_CHECK_PTRACE", "sometimes", "check"),
    ("HEAP_CHECK_AFTER_DESTRUCTORS", "perhaps", "as-is"),
    ("HEAP_CHECK_IGNORE_GLOBAL_LIVE", "2", "as-is"),
    ("HEAP_CHECK_IGNORE_THREAD_LIVE", "nope", "as-is"),
]

LEAK_CHECK_RAN = re.compile(r"^(Leak check _main_ detected leaks|No leaks found for check)", re.M)


def context_env(context, d):
    if context == "prof":
        return {"HEAPPROFILE": os.path.join(d, "p")}
    if context == "check":
        return {"HEAPCHECK": "normal", "HEAP_CHECK_DUMP_DIRECTORY": d,
                "HEAP_CHECK_REPORT_CLEAN": "true"}
    if context == "as-is":
        return {"HEAPCHECK": "as-is", "HEAP_CHECK_DUMP_DIRECTORY": d,
                "HEAP_CHECK_REPORT_CLEAN": "true"}
    return {}


def run_context(context, extra, what, flavour="full"):
    d = fresh("env")
    argv, env = victim(flavour)
    env.update(context_env(context, d))
    env.update(extra)
    r = run(argv + ["work", "16"], env)
    ran_normally(r, what, rc=None)
    if context == "prof":
        check(r.rc == 0, "%s: exit %s" % (what, r.rc))
        check(glob.glob(os.path.join(d, "p.*.heap")), "%s: profiling did not go on" % what)
    elif context in ("check", "as-is"):
        check(LEAK_CHECK_RAN.search(r.err) is not None,
              "%s: the leak check did not run\n%s" % (what, r.describe()))
    else:
        check(r.rc == 0, "%s: exit %s" % (what, r.rc))
    return r


def group_env():
    for name, value, context in ENV_CASES:
        what = "%s=%s" % (name, value)
        r = run_context(context, {name: value}, what)
        mentions = [l for l in r.lines("heapkit:") if name in l]
        check(len(mentions) == 1, "%s: want one line naming the variable, got %s"
              % (what, mentions), bug="verbose-twice" if name == "PERFTOOLS_VERBOSE" else None)
        if mentions:
            check(re.search(IGNORING % (name, re.escape(value)), mentions[0]) is not None
                  or (name, value) == ("HEAP_CHECK_POINTER_SOURCE_ALIGNMENT", "3")
                  and "must be 1, 2, 4 or 8" in mentions[0],
                  "%s: unexpected line %r" % (what, mentions[0]))
    # Empty values are "unset": silent defaults.
    r = run_context("prof", {"HEAP_PROFILE_TIME_INTERVAL": "", "PERFTOOLS_VERBOSE": ""},
                    "empty values")
    check(not r.lines("heapkit:"), "empty values: unexpected %s" % r.lines("heapkit:"))
    # Unknown HEAPCHECK modes: one line, checking is off, the program runs normally.
    for mode in ("bogus", "NORMAL", "normal ", "1"):
        d = fresh("env")
        argv, env = victim("full")
        env.update({"HEAPCHECK": mode, "HEAP_CHECK_DUMP_DIRECTORY": d})
        r = run(argv + ["work", "16"], env)
        ran_normally(r, "HEAPCHECK=%r" % mode)
        one_line(r, r"^heapkit: HEAPCHECK='%s' is not a known mode \(minimal, normal, strict, "
                 r"draconian, as-is, local\); leak checking is off$" % re.escape(mode),
                 "HEAPCHECK=%r" % mode)
        check(LEAK_CHECK_RAN.search(r.err) is None, "HEAPCHECK=%r: a check ran" % mode)
    # A value with a newline must not forge a second line; a 5000-byte value stays one line,
    # shown cut to 196 bytes and "..." (alloc/internal/env.h, PrintableValue).
    r = run_context("alloc", {"TCMALLOC_RELEASE_RATE": "1\nheapkit: forged"}, "newline value")
    check(len(r.lines("heapkit:")) == 1, "value with a newline: want one line, got %s"
          % r.lines("heapkit:"), bug="log-newline")
    r = run_context("alloc", {"TCMALLOC_TRANSFER_NUM_OBJ": "9" * 5000}, "5000-byte value")
    one_line(r, r"^heapkit: ignoring TCMALLOC_TRANSFER_NUM_OBJ='9{196}\.\.\.': ", "5000-byte value")
    # HEAPCHECK_SUPPRESSIONS pointing at things that are not a suppressions file.
    d = fresh("supp")
    garbage = os.path.join(d, "garbage.bin")
    with open(garbage, "wb") as f:
        rng = random.Random(7)
        f.write(bytes(rng.randrange(256) for _ in range(8192)))
    text_garbage = os.path.join(d, "lines.supp")
    with open(text_garbage, "w") as f:
        f.write("# comment\nleak:Grow\n" + "".join("this is line %d\n" % i for i in range(500)))
    huge = os.path.join(d, "huge.supp")
    with open(huge, "w") as f:
        f.truncate(2 << 20)
    fifo = os.path.join(d, "fifo.supp")
    os.mkfifo(fifo)
    supp_cases = [
        ("missing", os.path.join(d, "missing.supp"),
         r"^heapkit: cannot read HEAPCHECK_SUPPRESSIONS file '.*missing.supp': No such file or "
         r"directory; no suppressions$"),
        ("directory", d, r"^heapkit: cannot read HEAPCHECK_SUPPRESSIONS file '.*': not a regular "
         r"file; no suppressions$"),
        ("/dev/zero", "/dev/zero", r"^heapkit: cannot read HEAPCHECK_SUPPRESSIONS file "
         r"'/dev/zero': not a regular file; no suppressions$"),
        ("fifo", fifo, r"^heapkit: cannot read HEAPCHECK_SUPPRESSIONS file '.*fifo.supp': not a "
         r"regular file; no suppressions$"),
        ("binary", garbage, r"^heapkit: cannot read HEAPCHECK_SUPPRESSIONS file '.*': binary "
         r"data, expected 'leak:<pattern>' lines; no suppressions$"),
        ("2 MiB", huge, r"^heapkit: cannot read HEAPCHECK_SUPPRESSIONS file '.*huge.supp': "
         r"larger than 1 MiB; no suppressions$"),
        ("500 bad lines", text_garbage, r"^heapkit: HEAPCHECK_SUPPRESSIONS .*lines.supp:3: "
         r"expected 'leak:<pattern>'; 500 such lines ignored$"),
    ]
    for what, path, pattern in supp_cases:
        r = run_context("check", {"HEAPCHECK_SUPPRESSIONS": path}, "suppressions " + what)
        one_line(r, pattern, "HEAPCHECK_SUPPRESSIONS=" + what)


# ---------------------------------------------------------------------------------------------
# dump_dir: directories heapkit cannot write to.

def read_only_dir(name):
    """A directory nobody can create files in: a read-only tmpfs when root, else mode 0555.
    Returns (path, cleanup)."""
    d = fresh(name)
    if os.geteuid() == 0:
        if subprocess.call(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", d],
                           stderr=subprocess.DEVNULL) == 0:
            return d, lambda: subprocess.call(["umount", "-l", d])
        return None, lambda: None
    os.chmod(d, 0o555)
    return d, lambda: os.chmod(d, 0o755)


def group_dump_dir():
    ro, cleanup = read_only_dir("ro")
    try:
        a_file = os.path.join(fresh("dd"), "plain_file")
        open(a_file, "w").close()
        prefixes = [(os.path.join(a_file, "prof"), "ENOTDIR|EACCES"),
                    ("/" + "x" * 5000 + "/prof", "PATH_MAX"),
                    (os.path.join(A.workdir, "y" * 300), "NAME_MAX")]
        if ro:
            prefixes.append((os.path.join(ro, "prof"), "EROFS|EACCES"))
        for prefix, err in prefixes:
            what = "HEAPPROFILE=%s" % prefix[:60]
            for flavour in ("full", "static"):
                argv, env = victim(flavour)
                env["HEAPPROFILE"] = prefix
                r = run(argv + ["work", "16"], env)
                ran_normally(r, what + " " + flavour)
                bug = None
                if err == "PATH_MAX":
                    pattern = r"^heapkit: HEAPPROFILE prefix is too long \(5006 bytes\); heap " \
                              r"profiling is off$"
                    bug = "long-prefix"
                elif err == "NAME_MAX":
                    pattern = r"^heapkit: HEAPPROFILE=.*: file name too long.*; heap profiling " \
                              r"is off$"
                    bug = "long-prefix"
                else:
                    pattern = r"^heapkit: HEAPPROFILE=%s: cannot write to directory %s \((%s)\); " \
                              r"heap profiling is off$" % (re.escape(prefix),
                                                           re.escape(os.path.dirname(prefix)), err)
                one_line(r, pattern, what + " " + flavour, bug=bug)
        # HEAP_CHECK_DUMP_DIRECTORY: one line, the check still runs and dumps into /tmp.
        dirs = [os.path.join(A.workdir, "no_such_dir"), a_file] + ([ro] if ro else [])
        for d in dirs:
            what = "HEAP_CHECK_DUMP_DIRECTORY=%s" % d
            argv, env = victim("full")
            env.update({"HEAPCHECK": "normal", "HEAP_CHECK_DUMP_DIRECTORY": d})
            r = run(argv + ["work", "16"], env)
            ran_normally(r, what, rc=None)
            one_line(r, r"^heapkit: ignoring HEAP_CHECK_DUMP_DIRECTORY='%s': not a writable "
                     r"directory; using default /tmp$" % re.escape(d), what)
            dumped = re.findall(r'"(/tmp/[^"]+-end\.heap)"', r.err)
            if "detected leaks" in r.err:
                check(dumped and os.path.exists(dumped[0]), "%s: no dump in /tmp\n%s"
                      % (what, r.describe()))
            for f in dumped:
                if os.path.exists(f):
                    os.remove(f)
    finally:
        cleanup()


# ---------------------------------------------------------------------------------------------
# full_disk: ulimit -f and (when root) a 64 KiB tmpfs.

def complete_run(d, flavour="full"):
    """A normal run writing <d>/p.0001.heap and p.0002.heap; returns their contents."""
    argv, env = victim(flavour)
    env["HEAPPROFILE"] = os.path.join(d, "p")
    r = run(argv + ["work", "4"], env)
    ran_normally(r, "complete run")
    files = sorted(glob.glob(os.path.join(d, "p.*.heap")))
    check(len(files) == 2, "complete run wrote %s" % files)
    return {f: open(f, "rb").read() for f in files}


def expect_failed_dumps(r, d, before, errname, what):
    ran_normally(r, what)
    failed = r.lines("heapkit: failed to write heap profile")
    check(len(failed) >= 1 and all(re.match(r"^heapkit: failed to write heap profile %s/p\.000\d"
                                            r"\.heap: %s$" % (re.escape(d), errname), l)
                                   for l in failed),
          "%s: want 'heapkit: failed to write heap profile ...: %s' lines\n%s"
          % (what, errname, r.describe()))
    check(len(r.lines("heapkit:")) == len(failed), "%s: other heapkit lines: %s"
          % (what, r.lines("heapkit:")))
    for f, data in before.items():
        check(os.path.exists(f) and open(f, "rb").read() == data,
              "%s: the complete %s was damaged" % (what, f))
    check(not leftovers(d), "%s: temporary files left: %s" % (what, leftovers(d)))


def pprof_output_kept(d, limit_kwargs, errtext, what):
    """pprof-tool --output over a complete file: a failed write keeps the old file."""
    prof = sorted(glob.glob(os.path.join(d, "p.*.heap")))[0]
    out = os.path.join(d, "report.txt")
    if not os.path.exists(out):  # (made before the disk was filled)
        with open(out, "w") as f:
            f.write("previous complete report\n" * 3)
    r = run([A.pprof, "--raw", "--output=" + out, A.victim, prof],
            **limit_kwargs)
    check(r.rc == 2 and r.signal == 0, "%s: pprof-tool exit %s\n%s" % (what, r.rc, r.describe()))
    one_line(r, r"^pprof-tool: cannot write %s: %s$" % (re.escape(out), errtext), what,
             prefix="pprof-tool:")
    check(open(out).read() == "previous complete report\n" * 3, "%s: report damaged" % what)
    check(not leftovers(d), "%s: temporary files left: %s" % (what, leftovers(d)))


def group_full_disk():
    # ulimit -f 16 KiB: without care the kernel kills the program with SIGXFSZ.
    for flavour in ("full", "static"):
        d = fresh("fsize_" + flavour)
        before = complete_run(d, flavour)
        argv, env = victim(flavour)
        env.update({"HEAPPROFILE": os.path.join(d, "p"), "TCMALLOC_SAMPLE_PARAMETER": "1"})
        r = run(argv + ["work", "2048"], env, fsize=16 << 10)
        expect_failed_dumps(r, d, before, "EFBIG", "ulimit -f 16 KiB (%s)" % flavour)
    # The leak checker's dump under the limit: one line, the report and exit status stay.
    d = fresh("fsize_check")
    argv, env = victim("full")
    env.update({"HEAPCHECK": "normal", "HEAP_CHECK_DUMP_DIRECTORY": d})
    r = run(argv + ["work", "16"], env, fsize=1024)
    ran_normally(r, "leak check under ulimit -f 1 KiB", rc=None)
    if "detected leaks" in r.err:
        check(r.rc == 1, "leak check under ulimit -f: exit %s" % r.rc)
        one_line(r, r"^heapkit: cannot write leak profile %s/.*-end\.heap: File too large$"
                 % re.escape(d), "leak check under ulimit -f 1 KiB")
    check(not leftovers(d), "leak check under ulimit -f: temporary files left")
    d = fresh("fsize_pprof")
    complete_run(d)
    pprof_output_kept(d, {"fsize": 2048}, "File too large",
                      "pprof-tool --output under ulimit -f 2 KiB")

    # A real full file system: a 64 KiB tmpfs (root only).
    d = fresh("tmpfs")
    if os.geteuid() != 0 or subprocess.call(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d], stderr=subprocess.DEVNULL):
        print("tiny tmpfs: cannot mount (not root?): skipped")
        return
    try:
        before = complete_run(d)
        argv, env = victim("full")
        env.update({"HEAPPROFILE": os.path.join(d, "p"), "TCMALLOC_SAMPLE_PARAMETER": "1"})
        r = run(argv + ["work", "2048"], env)
        expect_failed_dumps(r, d, before, "ENOSPC", "64 KiB tmpfs")
        # Fill it up, then pprof-tool --output and the leak checker's dump.
        with open(os.path.join(d, "report.txt"), "w") as f:
            f.write("previous complete report\n" * 3)
        fd = os.open(os.path.join(d, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 1024) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        pprof_output_kept(d, {}, "No space left on device", "pprof-tool --output on a full disk")
        argv, env = victim("full")
        env.update({"HEAPCHECK": "normal", "HEAP_CHECK_DUMP_DIRECTORY": d})
        r = run(argv + ["work", "16"], env)
        ran_normally(r, "leak check on a full disk", rc=None)
        if "detected leaks" in r.err:
            one_line(r, r"^heapkit: cannot write leak profile %s/.*-end\.heap: No space left on "
                     r"device$" % re.escape(d), "leak check on a full disk")
        check(not leftovers(d), "leak check on a full disk: temporary files left")
    finally:
        subprocess.call(["umount", "-l", d])


# ---------------------------------------------------------------------------------------------
# profiles: truncated, binary, huge, lying.

def real_profile(stacks=16):
    d = fresh("real")
    argv, env = victim("full")
    env.update({"HEAPPROFILE": os.path.join(d, "p"), "TCMALLOC_SAMPLE_PARAMETER": "1"})
    r = run(argv + ["work", str(stacks)], env)
    ran_normally(r, "profile generation")
    return os.path.join(d, "p.0001.heap")


def pprof_fails(args, pattern, what, **kw):
    r = run([A.pprof] + args, **kw)
    check(r.rc == 2 and r.signal == 0, "%s: exit %s, want 2\n%s" % (what, r.rc, r.describe()))
    one_line(r, pattern, what, prefix="pprof-tool:")
    check(len(r.lines()) == 1, "%s: more than one line: %s" % (what, r.lines()))
    return r


def pprof_ok(args, what, warning=None, **kw):
    r = run([A.pprof] + args, **kw)
    check(r.rc == 0, "%s: exit %s, want 0\n%s" % (what, r.rc, r.describe()))
    if warning is not None:
        one_line(r, warning, what, prefix="pprof-tool:")
    check(not re.search(r"\b(nan|inf)\b", r.out), "%s: nan/inf in the report" % what)
    return r


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def group_profiles():
    good = real_profile()
    text = open(good, "rb").read()
    d = fresh("bad_profiles")
    # Every byte offset through the parser (in-process), then a few cuts through the CLI.
    r = run([A.truncation_check, good], timeout=60)
    print(r.out.strip())
    check(r.rc == 0, "truncation at every byte:\n" + r.out[-3000:])
    lines = text.split(b"\n")
    header = lines[0] + b"\n"
    # The end of the first sample line (the profiler's "# heapkit: dump reason:" comment comes
    # before it) and its line number.
    sample_start, sample_line = len(header), 2
    while text[sample_start:sample_start + 1] == b"#":
        sample_start = text.index(b"\n", sample_start) + 1
        sample_line += 1
    sample_end = text.index(b"\n", sample_start) + 1
    maps = text.index(b"MAPPED_LIBRARIES:")
    mid_maps = text.index(b"\n", maps + 20) + 30
    end_line = text.rindex(b"\n", 0, len(text) - 1) + 1  # "# heapkit: end of dump"
    cuts = [("mid header", len(header) // 2, r":1: .*truncated\?\)$"),
            ("mid sample address", sample_end - 5,
             r":%d: expected the dump's last line '# heapkit: end of dump', found end of file "
             r"\(the file ends in the middle of this line: truncated\?\)$" % sample_line),
            ("mid MAPPED_LIBRARIES", maps + 6, r":\d+: expected a sample line .*found "
             r"'MAPPED' \(the file ends in the middle of this line: truncated\?\)$"),
            ("mid maps line", mid_maps, r":\d+: expected the dump's last line .*truncated\?\)$"),
            ("before the maps", maps, r":\d+: expected the dump's last line .*truncated\?\)$"),
            ("before its end line", end_line, r":\d+: expected the dump's last line .*\(truncated\?\)$")]
    for what, cut, pattern in cuts:
        path = write(os.path.join(d, "cut.heap"), text[:cut])
        pprof_fails([path], r"^pprof-tool: %s" % re.escape(path) + pattern, "cut " + what)
    # Through the CLI at every line boundary: exit 2 and one line saying "truncated?" each.
    boundaries = [i + 1 for i, c in enumerate(text[:-1]) if c == ord("\n")]
    for cut in boundaries:
        path = write(os.path.join(d, "cut_line.heap"), text[:cut])
        pprof_fails([path], r"^pprof-tool: %s:\d+: .*\(truncated\?\)$" % re.escape(path),
                    "cut after byte %d (a line boundary)" % cut)
    # A dump without heapkit's lines (gperftools writes none) cut at a line boundary before its
    # memory map: fewer objects in its records than its header counts.
    plain = b"".join(l + b"\n" for l in lines[:-1] if not l.startswith(b"# heapkit:"))
    cut = plain.index(b"\n", plain.index(b"\n") + 1) + 1  # header and one record
    pprof_fails([write(os.path.join(d, "cut_plain.heap"), plain[:cut])],
                r"^pprof-tool: .*cut_plain\.heap:2: expected the header's \d+ in-use and \d+ "
                r"allocated objects, found \d+ and \d+ and no memory map \(truncated\?\)$",
                "gperftools-style dump cut before its map")
    pprof_ok(["--text", write(os.path.join(d, "plain.heap"), plain)], "the same dump whole")
    # Binary garbage: random bytes; a valid header then random bytes; an ELF file as profile.
    rnd = random.Random(11)
    junk = bytes(rnd.randrange(256) for _ in range(65536))
    pprof_fails([write(os.path.join(d, "junk.heap"), junk)],
                r"^pprof-tool: .*junk\.heap:1: expected (a heap profile header .*, found binary "
                r"data|text, found binary data)$", "random bytes")
    pprof_fails([write(os.path.join(d, "hdr_junk.heap"), header + junk)],
                r"^pprof-tool: .*hdr_junk\.heap:\d+: expected .*binary data$",
                "header then random bytes")
    # Huge: 1 GiB sparse files (bounded memory and time: the reader streams and stops at the
    # first line > 1 MiB), a real profile padded to 1 GiB with zeros.
    sparse = os.path.join(d, "sparse.heap")
    with open(sparse, "wb") as f:
        f.truncate(1 << 30)
    r = pprof_fails([sparse], r"^pprof-tool: .*sparse\.heap:1: expected text, found binary data$",
                    "1 GiB sparse file", address_space=1 << 30)
    check(r.seconds < 10, "1 GiB sparse file took %.1f s" % r.seconds)
    with open(sparse, "wb") as f:
        f.write(text)
        f.truncate(1 << 30)
    r = pprof_fails([sparse], r"^pprof-tool: .*sparse\.heap:%d: expected text, found binary data$"
                    % (text.count(b"\n") + 1), "profile padded to 1 GiB", address_space=1 << 30)
    # Many buckets: 100k distinct stacks (bounded time); and under an 80 MiB address-space
    # limit, the out-of-memory line instead of std::terminate.
    many = os.path.join(d, "many.heap")
    with open(many, "w") as f:
        f.write("heap profile: 100000: 31000000 [100000: 31000000] @ heapprofile\n")
        f.writelines("1: 64 [1: 64] @ 0x%x 0x%x 0x%x\n" % (0x400000 + i, 0x500000 + i % 977,
                                                        0x600000 + i % 13) for i in range(100000))
    r = pprof_ok(["--text", "--nodecount=5", many], "100k buckets", timeout=60,
                 warning=r"no memory map")
    check(r.seconds < 30, "100k buckets took %.1f s" % r.seconds)
    print("100k buckets: %.1f s" % r.seconds)
    # Unpruned graph of the 100k buckets (~101k nodes): refused before graphviz, at once, under
    # a 4 GiB address-space limit (it used to end in SIGSEGV there, or run for minutes).
    r = run([A.pprof, "--svg", "--nodefraction=0", "--edgefraction=0", "--nodecount=1000000",
             "--output=" + os.path.join(d, "huge.svg"), many], address_space=4 << 30, timeout=60)
    refusal = re.compile(r"^pprof-tool: the call graph has \d+ nodes and \d+ edges, more than "
                         r"graphviz lays out in reasonable time and memory \(at most 5000 nodes "
                         r"and 25000 edges\); shrink it with --nodecount, .*$")
    check(r.rc == 2 and r.signal == 0, "unpruned graph: exit %s\n%s" % (r.rc, r.describe()))
    check([l for l in r.lines() if refusal.match(l)] and
          all(refusal.match(l) or "no memory map" in l for l in r.lines()),
          "unpruned graph: %s" % r.lines())
    check(not os.path.exists(os.path.join(d, "huge.svg")), "unpruned graph: an SVG was written")
    check(r.seconds < 30, "unpruned graph refusal took %.1f s" % r.seconds)
    pprof_fails(["--text", many], r"^pprof-tool: out of memory \(the profile is too large for "
                r"the available memory\)$", "100k buckets in 80 MiB", address_space=80 << 20)
    # Lying headers and records.
    # With a memory map the header's totals are informational; without one, a header counting
    # more objects than the records is a file cut at a line boundary.
    h = b"heap profile: 999: 999999 [ 999: 999999] @ "
    rec = b"     2:      128 [     4:      256] @ 0x401000 0x402000\n"
    m = b"\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 1234 /bin/true\n"
    lying = [
        ("totals disagree", h + b"heapprofile\n" + rec + m, "ok"),
        ("totals disagree, no map", h + b"heapprofile\n" + rec,
         r":2: expected the header's 999 in-use and 999 allocated objects, found 2 and 4 and no "
         r"memory map \(truncated\?\)$"),
        ("rate 0", h + b"heap_v2/0\n" + rec + m, "ok"),
        ("rate 1", h + b"heap_v2/1\n" + rec + m, "ok"),
        ("rate 2^52", h + b"heap_v2/4503599627370496\n" + rec + m, "ok"),
        ("rate 2^53+", h + b"heap_v2/99999999999999999\n" + rec, r":1: expected a sampling rate"),
        ("negative rate", h + b"heap_v2/-1\n" + rec, r":1: expected a sampling rate"),
        ("negative header", b"heap profile: -5: -100 @ heapprofile\n" + rec, "ok"),
        ("negative pair (--base --raw)", h + b"heapprofile\n -2: -128 [ -4: -256] @ 0x401000\n" + m, "ok"),
        ("mixed signs", h + b"heapprofile\n -2: 128 [ 4: 256] @ 0x401000\n",
         r":2: expected an object count and bytes of the same sign"),
        ("count 2^53", h + b"heapprofile\n 9007199254740993: 1 [ 1: 1] @ 0x1\n",
         r":2: expected counts below 2\^53"),
        ("bytes without objects", h + b"heapprofile\n 0: 64 [ 0: 64] @ 0x1\n",
         r":2: expected 0 bytes where the object count is 0"),
        ("no addresses", h + b"heapprofile\n 1: 64 [ 1: 64] @\n" + m, "ok"),
        ("address 0 and 2^64-1", h + b"heapprofile\n 1: 64 @ 0x0 0xffffffffffffffff\n" + m, "ok"),
        ("17-digit address", h + b"heapprofile\n 1: 64 @ 0x10000000000000000\n",
         r":2: expected addresses of at most 16 hex digits"),
        ("maps: malformed lines", h + b"heapprofile\n" + rec + b"\nMAPPED_LIBRARIES:\n"
         b"garbage\n00400000-00300000 r-xp 00000000 08:01 1 /x\n400000-500000 rwxzq 0 08:01 1 /y\n"
         b"zz-yy r-xp 0 0:0 0\n", "ok"),
        ("maps: missing files", h + b"heapprofile\n" + rec + b"\nMAPPED_LIBRARIES:\n"
         b"00400000-00500000 r-xp 00000000 08:01 1234 /nonexistent/robust_missing\n",
         r"robust_missing"),
        ("PCs beyond every mapping", h + b"heapprofile\n 1: 64 @ 0x7fffffffffff 0xdead\n"
         b"\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 1234 /bin/true\n", "ok"),
    ]
    for what, data, expect in lying:
        path = write(os.path.join(d, "lie.heap"), data)
        if expect == "ok":
            r = run([A.pprof, "--text", "--show_bytes", path])
            check(r.rc == 0 and r.signal == 0, "lying %s: exit %s\n%s" % (what, r.rc, r.describe()))
            check(not re.search(r"\b(nan|inf)\b", r.out), "lying %s: nan/inf:\n%s" % (what, r.out))
            check(len(r.lines("pprof-tool:")) <= 1, "lying %s: more than one line: %s"
                  % (what, r.lines()))
            if what == "totals disagree":
                check("of 128 total" in r.out, "lying header changed the total:\n" + r.out)
        elif expect.startswith(":"):
            pprof_fails([path], r"^pprof-tool: .*lie\.heap" + expect, "lying " + what)
        else:
            r = pprof_ok(["--text", path], "lying " + what)
            warn = r.lines("pprof-tool: warning:")
            check(len(warn) == 1 and expect in warn[0],
                  "lying %s: want one warning naming %s, got %s" % (what, expect, warn))
    # pprof-tool's own environment: a wrong GVBINDIR, an unusable TMPDIR for --web.
    pprof_fails(["--svg", "--output=" + os.path.join(d, "g.svg"), good],
                r"^pprof-tool: graphviz: Layout type: \"dot\" not recognized: graphviz's plugin "
                r"configuration is missing or stale; .*GVBINDIR=/nonexistent is set",
                "GVBINDIR=/nonexistent", env={"GVBINDIR": "/nonexistent"})
    pprof_fails(["--web", good], r"^pprof-tool: cannot create a temporary file "
                r"/nonexistent/pprof-tool-XXXXXX\.svg: No such file or directory$",
                "TMPDIR=/nonexistent", env={"TMPDIR": "/nonexistent", "BROWSER": "/bin/true"})
    # Not a regular file: a FIFO (must not block), /dev/zero, a directory.
    fifo = os.path.join(d, "fifo.heap")
    os.mkfifo(fifo)
    for what, path in (("fifo", fifo), ("/dev/zero", "/dev/zero"), ("directory", d)):
        pprof_fails([path], r"^pprof-tool: %s: expected a regular file$" % re.escape(path),
                    "profile is a " + what, timeout=10)


# ---------------------------------------------------------------------------------------------
# binaries: missing, not ELF, replaced, stripped.

def group_binaries():
    d = fresh("bins")
    prog = os.path.join(d, "victim_copy")
    shutil.copy(A.victim, prog)
    env = {"LD_PRELOAD": A.heapkit, "HEAPPROFILE": os.path.join(d, "p"),
           "TCMALLOC_SAMPLE_PARAMETER": "1"}
    r = run([prog, "work", "16"], env)
    ran_normally(r, "profiling the copy")
    prof = os.path.join(d, "p.0001.heap")
    r = pprof_ok(["--text", prof], "intact binary")
    check("Grow" in r.out and not r.lines(), "intact binary:\n" + r.describe())
    # Explicit program argument that does not exist / is not ELF: it is taken as a profile.
    pprof_fails([os.path.join(d, "no_such_prog"), prof],
                r"^pprof-tool: .*no_such_prog: cannot open: No such file or directory$",
                "missing program argument")
    script = write(os.path.join(d, "script.sh"), b"#!/bin/sh\necho hi\n")
    pprof_fails([script, prof], r"^pprof-tool: .*script\.sh:2: expected a heap profile header "
                r".*found 'echo hi'$",
                "program argument not ELF")
    # A different ELF given as the program: one warning, module+0x names (never wrong names).
    r = pprof_ok(["--text", "/bin/true", prof], "wrong program argument",
                 warning=r"^pprof-tool: warning: /(usr/)?bin/true: does not match the profile's "
                         r"memory map .*; its addresses are shown as true\+0x<offset>$")
    check("true+0x" in r.out, "wrong program argument: want true+0x names:\n" + r.out[:800])
    # The binary in the maps replaced by a different ELF (build-id mismatch), or by a text file.
    for what, content in (("different ELF", open("/bin/true", "rb").read()),
                          ("not ELF", b"not an ELF file\n" * 100)):
        write(prog, content)
        r = pprof_ok(["--text", prof], "binary replaced by " + what)
        warn = [l for l in r.lines("pprof-tool: warning:") if "victim_copy" in l]
        check(len(warn) == 1, "binary replaced by %s: want one warning naming it, got %s"
              % (what, r.lines()))
        check("victim_copy+0x" in r.out, "binary replaced by %s: want module+0x names:\n%s"
              % (what, r.out[:800]))
    # Missing (deleted) binary.
    os.remove(prog)
    r = pprof_ok(["--text", prof], "binary missing")
    warn = [l for l in r.lines("pprof-tool: warning:") if "victim_copy" in l]
    check(len(warn) == 1, "binary missing: want one warning naming it, got %s" % r.lines())
    # Stripped binary: no crash, no error; names from the dynamic symbol table or module+0x.
    shutil.copy(A.victim, prog)
    subprocess.check_call(["strip", "--strip-all", prog])
    r = run([prog, "work", "16"], env)
    ran_normally(r, "profiling the stripped copy")
    r = pprof_ok(["--text", os.path.join(d, "p.0001.heap")], "stripped binary")
    check("victim_copy+0x" in r.out or "main" in r.out, "stripped binary:\n" + r.describe())
    check(len(r.lines("pprof-tool:")) <= 1, "stripped binary: lines %s" % r.lines())


# ---------------------------------------------------------------------------------------------
# frees: invalid and double frees under every flavour.

INVALID_FREE = re.compile(r"^heapkit: attempt to free invalid pointer 0x[0-9a-f]+$")
# Kinds not already covered by alloc.e2e.override.*.invalid_free_aborts / double_free_aborts
# (stack, global, delete(stack), realloc(stack), interior of a large object, immediate double
# free of 32 B / 5000 B / 1 MiB).
ABORT_KINDS = ["interior_small", "misaligned", "never_allocated", "wild", "delete_array_interior",
               "realloc_interior", "realloc_freed_large", "double_large"]


def group_frees():
    for flavour in ("minimal", "full", "static"):
        for kind in ABORT_KINDS:
            argv, env = victim(flavour)
            r = run(argv + ["badfree", kind], env, timeout=10)
            what = "%s (%s)" % (kind, flavour)
            check(r.signal == signal.SIGABRT, "%s: want SIGABRT, got rc %s\n%s"
                  % (what, r.rc, r.describe()))
            ls = r.lines()
            check(len(ls) == 1 and INVALID_FREE.match(ls[0]) is not None,
                  "%s: want exactly one 'heapkit: attempt to free invalid pointer 0x...' line, "
                  "got %s" % (what, ls))
        # Undetectable misuse that must not corrupt the heap: runs to completion.
        for kind in ("delete_of_malloc", "sized_delete_wrong_size"):
            argv, env = victim(flavour)
            r = run(argv + ["badfree", kind], env, timeout=10)
            ran_normally(r, "%s (%s)" % (kind, flavour))
        # A delayed double free (a, b, a): not caught when it happens (like tcmalloc), but the
        # corrupted free list must end in an abort with one line, not a SIGSEGV or a block
        # handed out twice.
        argv, env = victim(flavour)
        r = run(argv + ["badfree", "double_free_delayed"], env, timeout=10)
        print("double_free_delayed (%s): rc %s, %s %s" % (flavour, r.rc, r.out.strip(), r.lines()))
        check(r.signal == signal.SIGABRT and len(r.lines()) == 1 and
              r.lines()[0].startswith("heapkit: "),
              "double_free_delayed (%s): want SIGABRT and one heapkit line, got rc %s %s"
              % (flavour, r.rc, r.lines()), bug="delayed-double-free")


# ---------------------------------------------------------------------------------------------
# sizes: near SIZE_MAX through every entry point.

def group_sizes():
    for flavour, extra in (("minimal", {}), ("full", {}), ("static", {}),
                           ("full", {"TCMALLOC_SAMPLE_PARAMETER": "1"}),
                           ("static", {"HEAPCHECK": "normal"})):
        argv, env = victim(flavour)
        env.update(extra)
        env["TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD"] = "0"
        r = run(argv + ["sizes"], env)
        what = "sizes (%s %s)" % (flavour, extra)
        ran_normally(r, what, rc=None)
        check(r.rc == 0 and "sizes ok" in r.out, "%s:\n%s" % (what, r.describe()))
        extra_lines = [l for l in r.lines("heapkit:")]
        check(not extra_lines, "%s: unexpected lines %s" % (what, extra_lines))


GROUPS = {"env": group_env, "dump_dir": group_dump_dir, "full_disk": group_full_disk,
          "profiles": group_profiles, "binaries": group_binaries, "frees": group_frees,
          "sizes": group_sizes}


def main():
    global A
    p = argparse.ArgumentParser()
    p.add_argument("group", choices=sorted(GROUPS))
    for opt in ("victim", "victim-static", "heapkit", "minimal", "pprof", "truncation-check",
                "workdir"):
        p.add_argument("--" + opt, required=True)
    A = p.parse_args()
    A.workdir = os.path.abspath(A.workdir)
    os.makedirs(A.workdir, exist_ok=True)
    t0 = time.monotonic()
    GROUPS[A.group]()
    print("%s: %d checks, %d failures, %.1f s" % (A.group, CHECKS, len(FAILURES),
                                                  time.monotonic() - t0))
    if FAILURES:
        print("\n".join("FAILED: " + f.split("\n")[0] for f in FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
