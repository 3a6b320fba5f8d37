#!/usr/bin/env python3
"""HEAP_PROFILE_RSS_LIMIT against rss_workload.cc, whose memory crosses the limit twice.

  * RSS in bytes (always runs): HEAP_PROFILE_RSS_LIMIT=96m, the workload grows to 160 MiB in
    grow_a(), holds, frees and returns it, then grows again in grow_b(). Exactly two dumps say
    "RSS ... reached the limit" (once per crossing, though the check runs every 100 ms while
    the memory stays above), each with its peak files; the first is written during grow_a's
    phase and holds grow_a's blocks (at least the limit minus two 8 MiB blocks of lag and the
    process's base, no grow_b), the second grow_b's (no grow_a); each dump's RSS line is at or
    above the limit. 8 MiB blocks are sampled with probability 1 - exp(-16) at the default
    rate: the in-use figures are exact but for that.
  * A bad value is one line naming the variable, and no RSS-limit dump.
  * cgroup v2 (where the test can create a child cgroup with the memory controller): the same
    workload in a cgroup with memory.max = 400 MiB and HEAP_PROFILE_RSS_LIMIT=30% (120 MiB of
    memory.current): two "cgroup memory" dumps. Skipped with one line saying why elsewhere.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import check, clean_env, symbol_at, symbols_matching, verdict, workload_args  # noqa: E402

MIB = 1 << 20
DUMP_RE = re.compile(r'Dumping heap profile to (\S+) \((.*)\)$')


def run(args, workdir, env, prefix_cmd=()):
    full = clean_env()
    full.update(env)
    full['LD_PRELOAD'] = args.preload
    full['HEAPPROFILE'] = os.path.join(workdir, 'prof')
    p = subprocess.run(list(prefix_cmd) + [args.program, '160'], env=full, capture_output=True,
                       text=True, timeout=60)
    if not check(p.returncode == 0, 'workload failed (%d): %s' % (p.returncode, p.stderr[-800:])):
        return None, None
    phases = dict((k, int(v)) for k, v in (l.split() for l in p.stdout.split('\n') if l))
    return phases, p.stderr


def per_function(path, syms):
    """{function: in-use bytes} of a dump (blocks are sampled with p ~ 1: raw bytes), its
    RSS line and dump time."""
    inuse, rss, when = {}, None, None
    with open(path) as f:
        for line in f:
            m = re.match(r'^\s*\d+:\s*(\d+)\s*\[\s*\d+:\s*\d+\s*\]\s*@((?: 0x[0-9a-f]+)*)$', line)
            if m:
                for pc in (int(x, 16) for x in m.group(2).split()):
                    fn = symbol_at(syms, pc)
                    if fn in ('grow_a', 'grow_b'):
                        inuse[fn] = inuse.get(fn, 0) + int(m.group(1))
                        break
            m = re.match(r'^# heapkit: memory rss (\d+)$', line)
            if m:
                rss = int(m.group(1))
    return inuse, rss


def grow_symbols(program):
    """[(start, size, 'grow_a' or 'grow_b')]: the workload's two growing functions."""
    return symbols_matching(program, r'\b(grow_[ab])\(int\)')


def check_crossings(name, workdir, stderr, syms, limit, word):
    dumps = [(m.group(1), m.group(2)) for m in map(DUMP_RE.search, stderr.splitlines()) if m]
    crossings = [(f, r) for f, r in dumps if 'reached the limit' in r]
    for f, r in crossings:
        print('%s: %s (%s)' % (name, os.path.basename(f), r))
    if not check(len(crossings) == 2, '%s: %d RSS-limit dumps, want 2: %s' % (
            name, len(crossings), dumps)):
        return
    for (path, reason), mine, other in zip(crossings, ('grow_a', 'grow_b'), ('grow_b', 'grow_a')):
        check(reason.startswith(word), '%s: reason %r does not start with %r' % (name, reason, word))
        inuse, rss = per_function(path, syms)
        print('%s: %s holds %s, rss %s' % (name, os.path.basename(path),
                                          {k: v // MIB for k, v in inuse.items()}, rss))
        check(inuse.get(mine, 0) >= limit - 24 * MIB and inuse.get(other, 0) == 0,
              '%s: %s holds %s, want %s >= %d MiB and no %s' % (
                  name, path, inuse, mine, (limit - 24 * MIB) // MIB, other))
        if word == 'RSS':
            check(rss is not None and rss >= limit, '%s: %s RSS line %s below the limit' % (
                name, path, rss))
        number = re.search(r'\.(\d{4})\.heap$', path).group(1)
        for peak in ('prof.peak.%s.heap' % number, 'prof.peak.heap'):
            check(os.path.exists(os.path.join(workdir, peak)), '%s: no %s' % (name, peak))


def cgroup_case(args, syms):
    """The cgroup v2 case, or None with the reason it cannot run here."""
    own = None
    with open('/proc/self/cgroup') as f:
        for line in f:
            if line.startswith('0::'):
                own = line[3:].strip()
    if own is None:
        return 'no cgroup v2 entry in /proc/self/cgroup'
    root = None
    with open('/proc/self/mountinfo') as f:
        for line in f:
            parts = line.split()
            if ' - cgroup2 ' in line and len(parts) > 4:
                root = parts[4]
                break
    if root is None:
        return 'no cgroup2 file system mounted'
    parent = os.path.join(root, own.lstrip('/'))
    try:
        with open(os.path.join(parent, 'cgroup.controllers')) as f:
            if 'memory' not in f.read().split():
                return 'the memory controller is not available in %s' % parent
        child = os.path.join(parent, 'heapkit-rss-limit-%d' % os.getpid())
        os.mkdir(child)
    except OSError as e:
        return 'cannot create a child cgroup under %s (%s): no writable cgroup2 delegation' % (
            parent, e.strerror)
    try:
        try:
            with open(os.path.join(child, 'memory.max'), 'w') as f:
                f.write(str(400 * MIB))
        except OSError as e:
            return 'cannot set memory.max in %s (%s)' % (child, e.strerror)
        workdir = os.path.join(args.workdir, 'cgroup')
        os.makedirs(workdir)
        enter = ['sh', '-c', 'echo $$ > "$0"/cgroup.procs && exec "$@"', child]
        phases, stderr = run(args, workdir, {'HEAP_PROFILE_RSS_LIMIT': '30%'}, enter)
        if stderr is not None:
            check_crossings('cgroup', workdir, stderr, syms, 120 * MIB, 'cgroup memory')
        return None
    finally:
        for _ in range(50):
            try:
                os.rmdir(child)
                break
            except OSError:
                time.sleep(0.1)


def main():
    args = workload_args()
    syms = grow_symbols(args.program)
    check(len(syms) == 2, 'grow_a/grow_b not found in %s' % args.program)

    workdir = os.path.join(args.workdir, 'bytes')
    os.makedirs(workdir)
    phases, stderr = run(args, workdir, {'HEAP_PROFILE_RSS_LIMIT': '96m'})
    if stderr is not None:
        check_crossings('bytes', workdir, stderr, syms, 96 * MIB, 'RSS')

    bad = os.path.join(args.workdir, 'bad')
    os.makedirs(bad)
    phases, stderr = run(args, bad, {'HEAP_PROFILE_RSS_LIMIT': '12q'})
    if stderr is not None:
        lines = [l for l in stderr.splitlines() if 'HEAP_PROFILE_RSS_LIMIT' in l]
        check(len(lines) == 1 and 'reached the limit' not in stderr,
              'bad value: want one line and no RSS-limit dump, got %r' % stderr[-600:])
        print('bad value: %s' % (lines[0] if lines else None))

    why = cgroup_case(args, syms)
    if why is not None:
        print('SKIP: cgroup v2 case: %s' % why)

    return verdict('RSS-limit')


if __name__ == '__main__':
    sys.exit(main())
