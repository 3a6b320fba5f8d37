#!/usr/bin/env python3
"""The peak profile (HEAP_PROFILE_PEAK=1) against peak_workload.cc, whose peak is known.

Sampled mode, per run ("seed": the sampler is seeded from the clock, so runs differ):
  * each stack's bytes at the peak (un-sampled like the pprofs do) within 3*sqrt(T*B) of the
    truth (T the sampling period, B the true bytes). Why this bound: every object of s bytes is
    sampled with probability p = 1 - exp(-s/T) and then counts s/p bytes, so an estimate over B
    bytes has variance B*s*(1/p - 1) <= B*T (1/p - 1 <= T/s); 3 sigma then misses with
    probability <= 0.27 % per stack (normal approximation; 64-KiB objects: thousands per stack);
  * fc (allocated after the peak) under 1 % of the peak's total;
  * the peak's time inside phase A.
A run fails if any check fails: with two stacks, p_fail <= 0.54 %. With n runs the test allows
the smallest k failures such that P(more than k failures) < 0.5 % under that p_fail
(binomial): 40 runs -> k = 2 (38 of 40), 8 runs -> k = 1.
Exact mode (TCMALLOC_SAMPLE_PARAMETER=1): the per-stack peak is exact.
Without HEAP_PROFILE_PEAK no peak file is written. google-pprof and go tool pprof read the file
(when installed).
"""
import argparse
import math
import os
import re
import subprocess
import sys

CHUNK = 64 * 1024
TRUTH = {'fa': 4096 * CHUNK, 'fb': 1024 * CHUNK, 'fc': 0}
HEADER_RE = re.compile(r'^heap profile:\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@\s*'
                       r'(heapprofile|heap_v2/(\d+))$')
LINE_RE = re.compile(r'^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@((?: 0x[0-9a-f]+)*)$')
REASON_RE = re.compile(r'^# heapkit: dump reason: peak profile(?: of the interval from [\d.]+ s)?: '
                       r'\d+ MB in use at [\d.]+ s after profiling start \(estimated (\d+) bytes; CLOCK_MONOTONIC (\d+) ns; '
                       r'unix time [\d.]+\)$')

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import (check, clean_env, fresh_dir, go_pprof, google_pprof_text,  # noqa: E402
                           load_symbols, symbol_at, verdict)  # noqa: E402


def stack_of(syms, pc):
    m = re.search(r'\b(f[abc])\(\)', symbol_at(syms, pc) or '')
    return m.group(1) if m else None


def run(args, workdir, env, argv=()):
    full = clean_env()
    full.update(env)
    full['LD_PRELOAD'] = args.preload
    full['HEAPPROFILE'] = os.path.join(workdir, 'prof')
    p = subprocess.run([args.program] + list(argv), env=full, capture_output=True, text=True, timeout=60)
    if not check(p.returncode == 0, 'workload failed (%d): %s' % (p.returncode, p.stderr[-800:])):
        return None
    phases = dict((k, int(v)) for k, v in (l.split() for l in p.stdout.split('\n') if l))
    phases['stderr'] = p.stderr
    return phases


def parse_peak(path, syms):
    """(kind, rate, peak_bytes, peak_ns, {stack: (count, bytes) un-sampled})."""
    with open(path) as f:
        lines = f.read().split('\n')
    m = HEADER_RE.match(lines[0])
    if not check(m is not None, '%s: bad header %r' % (path, lines[0])):
        return None
    rate = int(m.group(6)) if m.group(6) else 1
    r = REASON_RE.match(lines[1])
    if not check(r is not None, '%s: no peak comment line, got %r' % (path, lines[1])):
        return None
    per = {k: [0.0, 0.0] for k in TRUTH}
    for line in lines[2:]:
        if line == '':
            break
        if line.startswith('# heapkit: '):  # comment lines (dump time, memory figures)
            continue
        lm = LINE_RE.match(line)
        if not check(lm is not None, '%s: bad record %r' % (path, line)):
            return None
        n, b = int(lm.group(1)), int(lm.group(2))
        check(int(lm.group(3)) == 0 and int(lm.group(4)) == 0,
              'allocation columns of a peak profile are zero: %r' % line)
        pcs = [int(x, 16) for x in lm.group(5).split()]
        fn = stack_of(syms, pcs[0]) if pcs else None
        if fn is None or n == 0:
            continue
        scale = 1.0 / (1.0 - math.exp(-(b / n) / rate)) if rate > 1 else 1.0
        per[fn][0] += n * scale
        per[fn][1] += b * scale
    return m.group(5), rate, int(r.group(1)), int(r.group(2)), per


def allowed_failures(n, p_fail=2 * 0.0027, tail=0.005):
    for k in range(n + 1):
        more = 1.0 - sum(math.comb(n, i) * p_fail ** i * (1 - p_fail) ** (n - i)
                         for i in range(k + 1))
        if more < tail:
            return k
    return n


def sampled_seed(args, syms, i):
    workdir = os.path.join(args.workdir, 'seed%02d' % i)
    os.makedirs(workdir)
    phases = run(args, workdir, {'HEAP_PROFILE_PEAK': '1'})
    path = os.path.join(workdir, 'prof.peak.heap')
    if phases is None or not check(os.path.exists(path), 'seed %d: no %s' % (i, path)):
        return False, None
    parsed = parse_peak(path, syms)
    if parsed is None:
        return False, None
    kind, rate, peak_bytes, peak_ns, per = parsed
    misses = []
    for fn in ('fa', 'fb'):
        bound = 3 * math.sqrt(rate * TRUTH[fn])
        if abs(per[fn][1] - TRUTH[fn]) > bound:
            misses.append('%s %.1f MiB vs %.1f MiB (bound %.1f MiB)' % (
                fn, per[fn][1] / 2**20, TRUTH[fn] / 2**20, bound / 2**20))
    if per['fc'][1] >= 0.01 * peak_bytes:
        misses.append('fc %.1f MiB >= 1 %% of the peak %.1f MiB' % (per['fc'][1] / 2**20,
                                                                    peak_bytes / 2**20))
    if not phases['phase_a_start'] <= peak_ns <= phases['phase_a_end']:
        misses.append('peak time %d outside phase A [%d, %d]' % (
            peak_ns, phases['phase_a_start'], phases['phase_a_end']))
    print('seed %2d: %s rate %d: fa %.1f fb %.1f fc %.1f MiB, peak %.1f MiB at +%.3f ms%s' % (
        i, kind, rate, per['fa'][1] / 2**20, per['fb'][1] / 2**20, per['fc'][1] / 2**20,
        peak_bytes / 2**20, (peak_ns - phases['phase_a_start']) / 1e6,
        ('  MISS: ' + '; '.join(misses)) if misses else ''))
    return not misses, path


def oracles(args, path, syms):
    """Both pprofs read the file; go's total matches ours within 1 %."""
    p = google_pprof_text(args.program, path)
    if p is not None:
        check(p.returncode == 0 and re.search(r'\bfa\b', p.stdout) is not None,
              'google-pprof cannot read the peak profile: %s' % (p.stdout + p.stderr)[-800:])
    p = go_pprof(['-top', '-unit=B', '-sample_index=inuse_space', args.program, path],
                 args.workdir)
    if p is not None:
        m = re.search(r'of (\d+)B total', p.stdout)
        ours = parse_peak(path, syms)
        if check(p.returncode == 0 and m is not None,
                 'go tool pprof cannot read the peak profile: %s' % (p.stdout + p.stderr)[-800:]):
            total = sum(v[1] for v in ours[4].values())
            check(abs(int(m.group(1)) - total) <= 0.01 * total + 2**20,
                  'go tool pprof total %s vs ours %.0f' % (m.group(1), total))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--program', required=True)
    ap.add_argument('--preload', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--seeds', type=int, default=8)
    ap.add_argument('--pprof_tool', help='pprof-tool: --peak reads the peak files')
    args = ap.parse_args()
    fresh_dir(args.workdir)
    syms = load_symbols(args.program)

    # Off by default.
    off = os.path.join(args.workdir, 'off')
    os.makedirs(off)
    run(args, off, {})
    check(not os.path.exists(os.path.join(off, 'prof.peak.heap')),
          'a peak profile was written without HEAP_PROFILE_PEAK')

    # A planted link at the peak file's name is refused (not followed), with one line.
    link = os.path.join(args.workdir, 'link')
    os.makedirs(link)
    victim = os.path.join(link, 'victim')
    with open(victim, 'w') as f:
        f.write('untouched\n')
    os.symlink(victim, os.path.join(link, 'prof.peak.heap'))
    phases = run(args, link, {'HEAP_PROFILE_PEAK': '1'})
    with open(victim) as f:
        check(f.read() == 'untouched\n', 'the peak profile was written through a planted link')
    check(os.path.islink(os.path.join(link, 'prof.peak.heap')), 'the planted link was replaced')
    if phases is not None:
        check('failed to write peak heap profile' in phases['stderr'],
              'no line says the peak profile was refused: %s' % phases['stderr'][-500:])

    # Exact mode: exact.
    exact = os.path.join(args.workdir, 'exact')
    os.makedirs(exact)
    phases = run(args, exact, {'HEAP_PROFILE_PEAK': '1', 'TCMALLOC_SAMPLE_PARAMETER': '1'})
    path = os.path.join(exact, 'prof.peak.heap')
    if phases is not None and check(os.path.exists(path), 'exact: no %s' % path):
        parsed = parse_peak(path, syms)
        if parsed is not None:
            kind, rate, peak_bytes, peak_ns, per = parsed
            print('exact: fa %d fb %d fc %d bytes (counts %d %d %d), peak %d bytes' % (
                per['fa'][1], per['fb'][1], per['fc'][1], per['fa'][0], per['fb'][0],
                per['fc'][0], peak_bytes))
            check(kind == 'heapprofile', 'exact: kind %s' % kind)
            for fn in TRUTH:
                check(per[fn][1] == TRUTH[fn] and per[fn][0] == TRUTH[fn] // CHUNK,
                      'exact: %s %d bytes in %d objects, truth %d' % (
                          fn, per[fn][1], per[fn][0], TRUTH[fn]))
            check(peak_bytes >= TRUTH['fa'] + TRUTH['fb'],
                  'exact: peak %d below fa + fb' % peak_bytes)
            check(phases['phase_a_start'] <= peak_ns <= phases['phase_a_end'],
                  'exact: peak time outside phase A')

    # Peaks per interval: a dump ends phase A. prof.peak.0001.heap is phase A's peak (fa + fb),
    # prof.peak.0002.heap (the exit dump) phase B's (fb + fc, fa freed), prof.peak.heap the
    # highest since start (phase A's). Exact mode: exact; the default rate: each stack within
    # 3*sqrt(T*B) of the truth, as above (one run: a miss has probability < 1 %).
    interval_truth = {'peak.0001': {'fa': TRUTH['fa'], 'fb': TRUTH['fb'], 'fc': 0},
                      'peak.0002': {'fa': 0, 'fb': TRUTH['fb'], 'fc': 3072 * CHUNK},
                      'peak': TRUTH}
    for mode, env in (('exact', {'TCMALLOC_SAMPLE_PARAMETER': '1'}), ('sampled', {})):
        workdir = os.path.join(args.workdir, 'interval_' + mode)
        os.makedirs(workdir)
        # No in-use or allocation triggers: the dump that ends phase A and the exit dump alone.
        env = dict(env, HEAP_PROFILE_PEAK='1', HEAP_PROFILE_INUSE_INTERVAL='0',
                   HEAP_PROFILE_ALLOCATION_INTERVAL='0')
        phases = run(args, workdir, env, ['dump'])
        if phases is None:
            continue
        windows = {'peak.0001': ('phase_a_start', 'phase_a_end'),
                   'peak.0002': ('phase_a_end', 'phase_b_end'),
                   'peak': ('phase_a_start', 'phase_a_end')}
        for name, truth in interval_truth.items():
            path = os.path.join(workdir, 'prof.%s.heap' % name)
            if not check(os.path.exists(path), '%s: no %s' % (mode, path)):
                continue
            parsed = parse_peak(path, syms)
            if parsed is None:
                continue
            kind, rate, peak_bytes, peak_ns, per = parsed
            print('interval %s %s: fa %d fb %d fc %d bytes, peak %d bytes' % (
                mode, name, per['fa'][1], per['fb'][1], per['fc'][1], peak_bytes))
            for fn, want in truth.items():
                if mode == 'exact':
                    check(per[fn][1] == want, 'interval exact %s: %s %d bytes, truth %d' % (
                        name, fn, per[fn][1], want))
                else:
                    bound = max(3 * math.sqrt(rate * want), 0.01 * peak_bytes)
                    check(abs(per[fn][1] - want) <= bound,
                          'interval sampled %s: %s %.1f MiB, truth %.1f MiB (bound %.1f MiB)' % (
                              name, fn, per[fn][1] / 2**20, want / 2**20, bound / 2**20))
            lo, hi = windows[name]
            check(phases[lo] <= peak_ns <= phases[hi],
                  'interval %s %s: peak time %d outside [%s, %s]' % (mode, name, peak_ns, lo, hi))
        if args.pprof_tool and mode == 'exact':
            # --peak: dump 2's interval (phase B: fc first, no fa) and the peak since start
            # (the prefix: fa first), each with its header line.
            for target, header, first, absent in (
                    ('prof.0002.heap', 'Peak of the interval from ', 'fc', 'fa'),
                    ('prof', 'Peak: 320 MB in use at ', 'fa', 'fc')):
                p = subprocess.run([args.pprof_tool, '--peak', '--top=20', args.program,
                                    os.path.join(workdir, target)],
                                   capture_output=True, text=True, timeout=120)
                rows = [l.split()[-1] for l in p.stdout.splitlines()
                        if re.match(r'^\s*[\d.]+[kMG]?B\s', l)]
                check(p.returncode == 0 and any(l.startswith(header) for l in p.stdout.splitlines())
                      and rows[:1] == [first] and absent not in rows,
                      'pprof-tool --peak %s: want header %r, %s first, no %s; got: %s' % (
                          target, header, first, absent, (p.stdout + p.stderr)[-800:]))
            p = subprocess.run([args.pprof_tool, '--peak', os.path.join(workdir, 'prof.0009.heap')],
                               capture_output=True, text=True, timeout=60)
            check(p.returncode == 2 and p.stderr.count('\n') == 1 and 'no peak profile' in p.stderr,
                  'pprof-tool --peak of a missing dump: want one line, got %r' % p.stderr)

    # Sampled mode, n runs.
    results = [sampled_seed(args, syms, i) for i in range(args.seeds)]
    missed = sum(1 for ok, _ in results if not ok)
    k = allowed_failures(args.seeds)
    print('sampled: %d of %d runs within every bound (at most %d may miss)' % (
        args.seeds - missed, args.seeds, k))
    check(missed <= k, 'sampled: %d of %d runs missed a bound (allowed %d)' % (
        missed, args.seeds, k))
    good = next((p for ok, p in results if ok and p), None)
    if good:
        oracles(args, good, syms)

    return verdict('peak')


if __name__ == '__main__':
    sys.exit(main())
