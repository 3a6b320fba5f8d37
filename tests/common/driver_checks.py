"""What the Python test drivers share.

A driver records each failed check and goes on (`check`, `fail`), so that one run names every
difference; `verdict` ends it: exit status 1 with the number of failed checks, else 0. Around
that: a fresh work directory, the workload drivers' arguments and their run under HEAPPROFILE,
the environment without the caller's heapkit and gperftools variables, a GET of a local web
UI, the program's code symbols from nm (to name the raw PCs of a dump), and the two
oracles a dump is offered to: gperftools' google-pprof and Go's pprof, each skipped with a note
when it is not installed (the test set installs both).

A driver imports it after putting this folder on sys.path (the path from the driver's folder):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
    from driver_checks import check, verdict  # noqa: E402
"""
import argparse
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request

failures = []


def fail(what):
    """Records a failed check and prints it; returns False."""
    failures.append(what)
    print('FAIL: ' + what, flush=True)
    return False


def check(cond, what):
    """`cond`, after recording `what` as a failure when it is false."""
    if not cond:
        fail(what)
    return cond


def verdict(what):
    """The driver's exit status: 1 with the number of failed checks, else 0 with `all <what>
    checks passed`."""
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    print('all %s checks passed' % what)
    return 0


def fresh_dir(path):
    """`path`, emptied of what an earlier run left there."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def workload_args(add=None, fresh=True):
    """The arguments of a driver that runs a workload program: --program, --preload (the
    library), --workdir (emptied unless `fresh` is false), --pprof_tool; `add(parser)` adds the
    driver's own."""
    ap = argparse.ArgumentParser()
    ap.add_argument('--program', required=True)
    ap.add_argument('--preload', required=True)
    ap.add_argument('--pprof_tool')
    ap.add_argument('--workdir', required=True)
    if add:
        add(ap)
    args = ap.parse_args()
    if fresh:
        fresh_dir(args.workdir)
    else:
        os.makedirs(args.workdir, exist_ok=True)
    return args


def profile_workload(args, timeout, **settings):
    """Runs args.program under args.preload with HEAPPROFILE=<workdir>/prof and `settings`
    (environment variables) in a clean environment: the finished process (text output), or
    None after a failed check when it did not exit 0."""
    env = clean_env(dict(settings, LD_PRELOAD=args.preload,
                         HEAPPROFILE=os.path.join(args.workdir, 'prof')))
    p = subprocess.run([args.program], env=env, capture_output=True, text=True, timeout=timeout)
    return p if check(p.returncode == 0, 'workload failed: %s' % p.stderr[-800:]) else None


def clean_env(extra=None):
    """This process's environment without the variables that steer heapkit or gperftools
    (HEAP*, TCMALLOC*, PERFTOOLS*, LD_PRELOAD), with the dict `extra` added."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('HEAP', 'TCMALLOC', 'PERFTOOLS', 'LD_PRELOAD'))}
    env.update(extra or {})
    return env


def load_symbols(program):
    """[(start, size, demangled name)] of the program's code symbols."""
    out = subprocess.run(['nm', '-S', '-C', '--defined-only', program], capture_output=True,
                         text=True, timeout=30).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in 'tTwW':
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return syms


def symbols_matching(program, pattern):
    """[(start, size, name)] of the program's code symbols whose demangled name the regex
    `pattern` finds, the name being its group 1 (e.g. r'\\b(grow_[ab])\\(')."""
    syms = []
    for start, size, name in load_symbols(program):
        m = re.search(pattern, name)
        if m:
            syms.append((start, size, m.group(1)))
    return syms


def symbol_at(syms, pc):
    """The name of the symbol of `syms` (load_symbols) that holds `pc`, or None."""
    return next((name for start, size, name in syms if start <= pc < start + size), None)


def local_page(port, path, timeout=60):
    """GET http://127.0.0.1:<port><path>: (status, body as text); an HTTP error is its status."""
    try:
        with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path), timeout=timeout) as r:
            return r.status, r.read().decode('utf-8', 'replace')
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode('utf-8', 'replace')


def go_env(workdir, **extra):
    """An environment for `go tool pprof` that stays offline and keeps its caches in `workdir`."""
    env = dict(os.environ, GOCACHE=os.path.join(workdir, 'gocache'), GOFLAGS='',
               GOPATH=os.path.join(workdir, 'gopath'), GOPROXY='off', HOME=workdir)
    env.update(extra)
    return env


def google_pprof_text(program, path):
    """google-pprof --text of the dump: the finished process, or None (with a note) when
    google-pprof is not installed."""
    if not shutil.which('google-pprof'):
        print('note: google-pprof not installed; oracle skipped')
        return None
    return subprocess.run(['google-pprof', '--text', program, path], capture_output=True,
                          text=True, timeout=60)


def go_pprof(argv, workdir, timeout=120):
    """`go tool pprof <argv>`, offline: the finished process, or None (with a note) when go is
    not installed."""
    if not shutil.which('go'):
        print('note: go not installed; oracle skipped')
        return None
    return subprocess.run(['go', 'tool', 'pprof'] + list(argv), capture_output=True, text=True,
                          timeout=timeout, env=go_env(workdir))


def oracles_read(program, path, workdir, what, google_pattern):
    """Both pprofs read the dump at `path` (`what` names it in a failure): google-pprof's text
    report matches the regex `google_pattern`, go's -raw listing has samples."""
    p = google_pprof_text(program, path)
    if p is not None:
        check(p.returncode == 0 and re.search(google_pattern, p.stdout) is not None,
              'google-pprof cannot read %s: %s' % (what, (p.stdout + p.stderr)[-800:]))
    p = go_pprof(['-raw', program, path], workdir)
    if p is not None:
        check(p.returncode == 0 and 'Samples:' in p.stdout,
              'go tool pprof cannot read %s: %s' % (what, (p.stdout + p.stderr)[-800:]))
