#!/usr/bin/env python3
"""End-to-end checks of heapkit's HEAPPROFILE (see CMakeLists.txt).

One case per invocation; exits 0 on success, 1 with a message per failed check. Every child
process has a timeout. Statistical bounds for the sampled case are derived in the comments of
check_sampled() and in profiler/README.md.
"""
import argparse
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from script_checks import check, clean_env, failures, load_symbols  # noqa: E402

HEADER_RE = re.compile(r'^heap profile:\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@\s*'
                       r'(heapprofile|heap_v2/(\d+)|growthz)$')
LINE_RE = re.compile(r'^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@((?: 0x[0-9a-f]+)*)$')
DUMP_RE = re.compile(r'^Dumping heap profile to (\S+) \((.*)\)$', re.M)
REASON_PREFIX = '# heapkit: dump reason: '
MEMORY_RE = re.compile(r'^# heapkit: memory (\w+) (\d+)$')

# Known pattern (workload.cc).
A_N, A_SIZE = 20000, 1000
B_N, B_SIZE = 5000, 8000
C_N, C_SIZE = 200000, 100


class Ctx:
    pass


def run(ctx, args, env=None, timeout=60, preexec_fn=None):
    full_env = clean_env()
    if ctx.flavour == 'preload':
        full_env['LD_PRELOAD'] = ctx.preload
    full_env.update(env or {})
    p = subprocess.run([ctx.program] + args, env=full_env, capture_output=True, text=True,
                       timeout=timeout, preexec_fn=preexec_fn)
    sys.stdout.write('$ %s %s\n' % (' '.join('%s=%s' % kv for kv in (env or {}).items()),
                                     ' '.join(args)))
    sys.stdout.write(p.stderr)
    return p


def parse_profile(path):
    with open(path) as f:
        text = f.read()
    lines = text.split('\n')
    m = HEADER_RE.match(lines[0])
    if not check(m is not None, '%s: bad header %r' % (path, lines[0])):
        return None
    prof = {
        'header': tuple(int(m.group(i)) for i in range(1, 5)),
        'kind': {'heapprofile': 'exact', 'growthz': 'growth'}.get(m.group(5), 'sampled'),
        'rate': int(m.group(6)) if m.group(6) else 1,
        'records': [],
        'maps': [],
        'reason': None,
    }
    i = 1
    if len(lines) > 1 and lines[1].startswith(REASON_PREFIX):  # profiler/format/legacy_writer.h
        prof['reason'] = lines[1][len(REASON_PREFIX):]
        i = 2
        check(re.match(r'^# heapkit: dump time: \d+\.\d{3} pid \d+$', lines[2]) is not None,
              '%s: no dump time line after the reason: %r' % (path, lines[2]))
        i = 3
    prof['memory'] = {}
    while i < len(lines) and lines[i] != '':
        if lines[i].startswith('#'):  # the comment block (profiler/output/memory_breakdown.h)
            mm = MEMORY_RE.match(lines[i])
            if mm is not None:
                prof['memory'][mm.group(1)] = int(mm.group(2))
            i += 1
            continue
        lm = LINE_RE.match(lines[i])
        if not check(lm is not None, '%s: bad record line %r' % (path, lines[i])):
            return None
        counts = tuple(int(lm.group(k)) for k in range(1, 5))
        pcs = [int(x, 16) for x in lm.group(5).split()]
        prof['records'].append((counts, pcs))
        i += 1
    check(i + 1 < len(lines) and lines[i + 1] == 'MAPPED_LIBRARIES:',
          '%s: no blank line + MAPPED_LIBRARIES: after the records' % path)
    prof['maps'] = [l for l in lines[i + 2:] if l]
    sums = tuple(sum(r[0][k] for r in prof['records']) for k in range(4))
    check(sums == prof['header'], '%s: header totals %s != sum of lines %s'
          % (path, prof['header'], sums))
    check(any(ctx_program_name() in l for l in prof['maps']),
          '%s: the program is not in MAPPED_LIBRARIES' % path)
    return prof


_program_name = ['']


def ctx_program_name():
    return _program_name[0]


def function_of(syms, pc):
    for start, size, name in syms:
        if start <= pc < start + size:
            return name
    return None


def per_function(ctx, prof, names):
    """Sums (inuse_n, inuse_b, alloc_n, alloc_b) by the function holding each record's leaf PC,
    un-sampling heap_v2 lines the way the pprofs do."""
    result = {n: [0.0, 0.0, 0.0, 0.0] for n in names}
    for counts, pcs in prof['records']:
        if not pcs:
            continue
        fn = function_of(ctx.syms, pcs[0])
        key = next((n for n in names if fn and re.search(r'\b%s\(' % n, fn)), None)
        if key is None:
            continue
        for k in (0, 2):
            n, b = counts[k], counts[k + 1]
            scale = 1.0
            if prof['kind'] == 'sampled' and n > 0 and b > 0 and prof['rate'] > 1:
                scale = 1.0 / (1.0 - math.exp(-(b / n) / prof['rate']))
            result[key][k] += n * scale
            result[key][k + 1] += b * scale
    return result


def dumps(stderr):
    return DUMP_RE.findall(stderr)


def prefix(ctx, name='prof'):
    return os.path.join(ctx.workdir, name)


def pprof_text(ctx, path, extra=()):
    if ctx.flavour != 'preload':
        return None  # the format is the same in both flavours: the oracles run once
    if shutil.which('google-pprof') is None:
        print('note: google-pprof not installed; oracle skipped')
        return None
    p = subprocess.run(['google-pprof', '--text'] + list(extra) + [ctx.program, path],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, 'google-pprof failed: %s' % p.stderr[-500:])
    return p.stdout + p.stderr


def go_pprof_top(ctx, path, sample_index):
    if ctx.flavour != 'preload':
        return None
    if shutil.which('go') is None:
        print('note: go not installed; go tool pprof oracle skipped')
        return None
    env = dict(os.environ, GOCACHE=os.path.join(ctx.workdir, 'gocache'),
               GOPATH=os.path.join(ctx.workdir, 'gopath'), GOFLAGS='', GOPROXY='off',
               HOME=ctx.workdir)
    p = subprocess.run(['go', 'tool', 'pprof', '-top', '-addresses', '-unit=B', '-nodecount=1000',
                        '-sample_index=' + sample_index, ctx.program, path],
                       capture_output=True, text=True, timeout=90, env=env)
    check(p.returncode == 0, 'go tool pprof failed: %s' % p.stderr[-500:])
    return p.stdout


def go_flat_by_function(ctx, text, names):
    """go tool pprof 1.19 cannot symbolize C binaries itself, so -addresses rows are mapped to
    functions with nm (the binaries are non-PIE: PCs are symbol addresses)."""
    result = {n: 0 for n in names}
    total = None
    for line in text.splitlines():
        m = re.match(r'^Showing nodes accounting for (\d+)B, [\d.]+% of (\d+)B total', line)
        if m:
            total = int(m.group(2))
        m = re.match(r'^\s*(\d+)B\s+[\d.]+%\s+[\d.]+%\s+\d+B\s+[\d.]+%\s+([0-9a-f]+) ', line)
        if m:
            fn = function_of(ctx.syms, int(m.group(2), 16))
            key = next((n for n in names if fn and re.search(r'\b%s\(' % n, fn)), None)
            if key:
                result[key] += int(m.group(1))
    return total, result


# ---------------------------------------------------------------- cases

def check_started(stderr):
    check('Starting tracking the heap' in stderr.splitlines(),
          'no "Starting tracking the heap" line')


def case_exact(ctx):
    p = run(ctx, ['pattern'], {'HEAPPROFILE': prefix(ctx), 'TCMALLOC_SAMPLE_PARAMETER': '1'})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    check_started(p.stderr)
    d = dumps(p.stderr)
    check(len(d) == 1 and d[0][0] == prefix(ctx) + '.0001.heap',
          'expected exactly one dump, to prof.0001.heap; got %s' % d)
    if not d:
        return
    m = re.fullmatch(r'Exiting, 57 MB in use \(peak (\d+) MB\)', d[0][1])
    check(m is not None and int(m.group(1)) >= 57,
          'exit reason %r (expected "Exiting, 57 MB in use (peak >= 57 MB)")' % d[0][1])
    prof = parse_profile(d[0][0])
    if prof is None:
        return
    check(prof['kind'] == 'exact', 'header kind %s, expected heapprofile' % prof['kind'])
    f = per_function(ctx, prof, ['RetainA', 'RetainB', 'ChurnC'])
    check(f['RetainA'] == [A_N, A_N * A_SIZE, A_N, A_N * A_SIZE], 'RetainA exact %s' % f['RetainA'])
    check(f['RetainB'] == [B_N, B_N * B_SIZE, B_N, B_N * B_SIZE], 'RetainB exact %s' % f['RetainB'])
    check(f['ChurnC'] == [0, 0, C_N, C_N * C_SIZE], 'ChurnC exact %s' % f['ChurnC'])
    # google-pprof: RetainB then RetainA on top, with their exact MB.
    text = pprof_text(ctx, d[0][0])
    if text is not None:
        rows = [l.split() for l in text.splitlines() if re.match(r'^\s*[\d.]+\s+[\d.]+%', l)]
        top = [(r[5] if len(r) > 5 else '', float(r[0])) for r in rows]
        check(len(top) >= 2 and 'RetainB' in top[0][0] and 'RetainA' in top[1][0],
              'google-pprof top functions %s' % top[:3])
        if len(top) >= 2:
            check(abs(top[0][1] - B_N * B_SIZE / 2**20) < 0.06, 'google-pprof RetainB %s' % top[0][1])
            check(abs(top[1][1] - A_N * A_SIZE / 2**20) < 0.06, 'google-pprof RetainA %s' % top[1][1])
        text = pprof_text(ctx, d[0][0], ['--alloc_space'])
        check(re.search(r'^\s*19\.1\s.*ChurnC', text, re.M) is not None,
              'google-pprof --alloc_space does not show ChurnC with 19.1 MB')
    top = go_pprof_top(ctx, d[0][0], 'inuse_space')
    if top is not None:
        total, f = go_flat_by_function(ctx, top, ['RetainA', 'RetainB', 'ChurnC'])
        check(total == prof['header'][1], 'go pprof total %s != header %s' % (total, prof['header'][1]))
        check(f == {'RetainA': A_N * A_SIZE, 'RetainB': B_N * B_SIZE, 'ChurnC': 0},
              'go pprof inuse by function %s' % f)
        total, f = go_flat_by_function(ctx, go_pprof_top(ctx, d[0][0], 'alloc_objects'),
                                       ['RetainA', 'RetainB', 'ChurnC'])
        check(f['ChurnC'] == C_N, 'go pprof alloc_objects ChurnC %s' % f['ChurnC'])


GLOBAL_BLOCKS, GLOBAL_BLOCK_SIZE = 8, 4 << 20  # workload.cc (kGlobal*)


def case_exit_before_destructors(ctx):
    """The default run's one dump is taken at exit(), before the global destructor that frees
    HoldInGlobal's blocks: it shows them in use (4 MiB blocks are always sampled)."""
    p = run(ctx, ['globals'], {'HEAPPROFILE': prefix(ctx)})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    d = dumps(p.stderr)
    check(len(d) == 1 and d[0][0] == prefix(ctx) + '.0001.heap', 'expected one dump; got %s' % d)
    if not d:
        return
    m = re.fullmatch(r'Exiting, (\d+) MB in use \(peak (\d+) MB\)', d[0][1])
    check(m is not None and int(m.group(1)) >= 30 and int(m.group(2)) >= int(m.group(1)),
          'exit reason %r, expected "Exiting, >= 30 MB in use (peak ...)"' % d[0][1])
    prof = parse_profile(d[0][0])
    if prof is None:
        return
    f = per_function(ctx, prof, ['HoldInGlobal'])
    want = GLOBAL_BLOCKS * GLOBAL_BLOCK_SIZE
    check(f['HoldInGlobal'][1] >= 0.9 * want,
          'HoldInGlobal in use at exit: %s (raw, want ~%d B): the dump came after the global '
          'destructor' % (f['HoldInGlobal'], want))


def case_sampled(ctx):
    rate = 16384
    p = run(ctx, ['pattern'], {'HEAPPROFILE': prefix(ctx), 'TCMALLOC_SAMPLE_PARAMETER': str(rate)})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    d = dumps(p.stderr)
    if not check(len(d) == 1, 'expected one dump, got %s' % d):
        return
    prof = parse_profile(d[0][0])
    if prof is None:
        return
    check(prof['kind'] == 'sampled' and prof['rate'] == rate,
          'header should be heap_v2/%d, got %s/%s' % (rate, prof['kind'], prof['rate']))
    f = per_function(ctx, prof, ['RetainA', 'RetainB', 'ChurnC'])
    # Each of the n objects of size s is sampled independently with p = 1 - exp(-s/R); the
    # estimate k*s/p (k ~ Binomial(n, p)) is unbiased with relative standard deviation
    # sqrt((1-p)/(n*p)). We accept 5 standard deviations (false alarm < 1e-6 per check).
    for name, n, size, inuse in (('RetainA', A_N, A_SIZE, True), ('RetainB', B_N, B_SIZE, True),
                                 ('ChurnC', C_N, C_SIZE, False)):
        prob = 1 - math.exp(-size / rate)
        rel_sd = math.sqrt((1 - prob) / (n * prob))
        truth = n * size
        est_alloc = f[name][3]
        check(abs(est_alloc / truth - 1) <= 5 * rel_sd,
              '%s alloc estimate %.0f vs truth %d (bound %.1f%%)' % (name, est_alloc, truth,
                                                                     500 * rel_sd))
        if inuse:
            check(abs(f[name][1] / truth - 1) <= 5 * rel_sd,
                  '%s inuse estimate %.0f vs truth %d' % (name, f[name][1], truth))
        else:
            check(f[name][1] == 0, '%s should have nothing in use' % name)
    text = pprof_text(ctx, d[0][0])
    if text is not None:
        check('Adjusting heap profiles for 1-in-%d sampling rate' % rate in text,
              'google-pprof did not recognise heap_v2/%d' % rate)
        m = re.search(r'Total: ([\d.]+) MB', text)
        est_total = sum(f[n][1] for n in ('RetainA', 'RetainB'))
        check(m is not None and abs(float(m.group(1)) - est_total / 2**20) < 0.6,
              'google-pprof total %s vs our un-sampled %.1f MB' % (m and m.group(1), est_total / 2**20))
    top = go_pprof_top(ctx, d[0][0], 'inuse_space')
    if top is not None:
        total, g = go_flat_by_function(ctx, top, ['RetainA', 'RetainB'])
        for n in ('RetainA', 'RetainB'):
            check(abs(g[n] - f[n][1]) <= 0.001 * f[n][1] + 2,
                  'go pprof un-sampled %s %s vs ours %.0f' % (n, g[n], f[n][1]))


def case_default_rate(ctx):
    p = run(ctx, ['pattern'], {'HEAPPROFILE': prefix(ctx)})
    d = dumps(p.stderr)
    if not check(len(d) == 1, 'expected one dump, got %s' % d):
        return
    prof = parse_profile(d[0][0])
    if prof:
        check(prof['kind'] == 'sampled' and prof['rate'] == 524288,
              'default should be heap_v2/524288, got %s/%s' % (prof['kind'], prof['rate']))
        f = per_function(ctx, prof, ['RetainB'])
        check(f['RetainB'][1] > 0, 'RetainB (40 MB) has no samples at the default rate')


def trigger_case(ctx, args, env, reason_re, minimum):
    env = dict(env, HEAPPROFILE=prefix(ctx), TCMALLOC_SAMPLE_PARAMETER='1')
    p = run(ctx, args, env)
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    d = dumps(p.stderr)
    hits = [r for f, r in d if re.fullmatch(reason_re, r)]
    check(len(hits) >= minimum, 'expected >= %d dumps matching %r, got %s' % (minimum, reason_re, d))
    for i, (f, r) in enumerate(d):
        check(f == '%s.%04d.heap' % (prefix(ctx), i + 1), 'dump %d has file name %s' % (i + 1, f))
        check(os.path.exists(f), 'missing %s' % f)
        # The file carries the logged reason, word for word, as the comment after its header.
        prof = parse_profile(f) if os.path.exists(f) else None
        check(prof is not None and prof['reason'] == r,
              '%s: reason line %r, logged %r' % (f, prof and prof['reason'], r))
    check(d and d[-1][1].startswith('Exiting'), 'last dump should be the exit dump: %s' % d[-1:])
    return d


def case_alloc_interval(ctx):
    d = trigger_case(ctx, ['churn', '64'], {'HEAP_PROFILE_ALLOCATION_INTERVAL': '16m'},
                     r'\d+ MB allocated cumulatively, \d+ MB currently in use', 3)
    mbs = [int(r.split()[0]) for f, r in d if 'allocated cumulatively' in r]
    check(all(b - a >= 16 for a, b in zip(mbs, mbs[1:])), 'allocation dumps not 16 MB apart: %s' % mbs)


def case_small_interval(ctx):
    # A 64 KiB interval at the default 512 KiB sampling period: the profiler samples every 8 KiB
    # for the run (and says so), so the dumps come about every 64 KiB, not one per sample.
    env = {'HEAPPROFILE': prefix(ctx), 'HEAP_PROFILE_ALLOCATION_INTERVAL': '64k',
           'PERFTOOLS_VERBOSE': '1'}
    p = run(ctx, ['churn', '16'], env)
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    check(re.search(r'a dump interval of 65536 bytes is below 8 sampling periods of 524288 bytes; '
                    r'sampling every 8192 bytes for this run', p.stderr) is not None,
          'no verbose line about the lowered period: %s' % p.stderr[:500])
    d = dumps(p.stderr)
    mbs = [int(r.split()[0]) for f, r in d if 'allocated cumulatively' in r]
    check(mbs, 'no allocation dumps: %s' % d[:3])
    if mbs:
        expected = mbs[-1] * 16  # 64 KiB intervals per MB
        check(len(mbs) >= 0.8 * expected,
              '%d allocation dumps for %d MB at a 64 KiB interval (want >= %d)'
              % (len(mbs), mbs[-1], 0.8 * expected))


def case_dealloc_interval(ctx):
    trigger_case(ctx, ['churn', '64'], {'HEAP_PROFILE_DEALLOCATION_INTERVAL': '16m',
                                        'HEAP_PROFILE_ALLOCATION_INTERVAL': '0'},
                 r'\d+ MB freed cumulatively, \d+ MB currently in use', 3)


def case_inuse_interval(ctx):
    d = trigger_case(ctx, ['retain', '64'], {'HEAP_PROFILE_INUSE_INTERVAL': '16m'},
                     r'\d+ MB currently in use', 3)
    mbs = [int(r.split()[0]) for f, r in d if re.fullmatch(r'\d+ MB currently in use', r)]
    check(mbs == sorted(mbs) and all(b - a >= 16 for a, b in zip(mbs, mbs[1:])),
          'in-use dumps should rise by >= 16 MB: %s' % mbs)


def case_time_idle(ctx):
    # An idle program (no allocation at all) must still dump every second, and not at start.
    p = run(ctx, ['idle', '2.5'], {'HEAPPROFILE': prefix(ctx), 'HEAP_PROFILE_TIME_INTERVAL': '1'})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    d = dumps(p.stderr)
    timed = [r for f, r in d if re.fullmatch(r'\d+ sec since the last dump', r)]
    check(len(timed) == 2, 'expected 2 time dumps in 2.5 s (none at start), got %s' % d)
    check(all(r.startswith('1 sec') for r in timed), 'time reasons %s' % timed)
    check(d and d[-1][1].startswith('Exiting'), 'no exit dump: %s' % d)


def case_signal(ctx):
    p = run(ctx, ['signal', '10'], {'HEAPPROFILE': prefix(ctx), 'HEAPPROFILESIGNAL': '10'})
    check(p.returncode == 0, 'exit status %d (the signal must not kill the program)' % p.returncode)
    check('Using signal 10 as heap profiling switch' in p.stderr, 'no "Using signal" line')
    d = dumps(p.stderr)
    check([r for f, r in d] == ['signal', d[-1][1]] and d[-1][1].startswith('Exiting'),
          'expected a "signal" dump then the exit dump, got %s' % d)
    if d:
        parse_profile(d[0][0])


def case_fork(ctx):
    p = run(ctx, ['fork'], {'HEAPPROFILE': prefix(ctx), 'TCMALLOC_SAMPLE_PARAMETER': '1'})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    m = re.search(r'parent (\d+) child (\d+) status 0', p.stdout)
    if not check(m is not None, 'unexpected output %r' % p.stdout):
        return
    child = m.group(2)
    d = dumps(p.stderr)
    files = sorted(f for f, r in d)
    check(files == sorted([prefix(ctx) + '.0001.heap', '%s_%s.0001.heap' % (prefix(ctx), child)]),
          'expected prof.0001.heap and prof_%s.0001.heap, got %s' % (child, d))
    child_file = '%s_%s.0001.heap' % (prefix(ctx), child)
    if os.path.exists(child_file):
        prof = parse_profile(child_file)
        if prof:
            # The child holds the parent's pattern plus its own 2 MB of 64 KiB blocks.
            f = per_function(ctx, prof, ['RetainA', 'Retain'])
            check(f['RetainA'][1] == A_N * A_SIZE, 'child profile RetainA %s' % f['RetainA'])
            check(f['Retain'][1] == 2 * 2**20, 'child profile Retain %s' % f['Retain'])


def case_exec(ctx):
    # A program exec'd by a profiled one inherits HEAPPROFILE: it must not overwrite the
    # parent's files (gperftools' scheme: it writes <prefix>_<pid>.NNNN.heap).
    p = run(ctx, ['exec'], {'HEAPPROFILE': prefix(ctx), 'TCMALLOC_SAMPLE_PARAMETER': '1'})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    m = re.search(r'parent (\d+) child (\d+) status 0', p.stdout)
    if not check(m is not None, 'unexpected output %r' % p.stdout):
        return
    d = dumps(p.stderr)
    files = sorted(f for f, r in d)
    child_file = '%s_%s.0001.heap' % (prefix(ctx), m.group(2))
    check(files == sorted([prefix(ctx) + '.0001.heap', child_file]),
          'expected prof.0001.heap and %s, got %s' % (os.path.basename(child_file), d))
    prof = parse_profile(prefix(ctx) + '.0001.heap')
    if prof:
        f = per_function(ctx, prof, ['RetainA'])
        check(f['RetainA'][1] == A_N * A_SIZE, "the parent's file was overwritten: %s" % f)


def case_heap_sample(ctx):
    # MallocExtension::GetHeapSample works with TCMALLOC_SAMPLE_PARAMETER alone.
    rate = 4096
    out = os.path.join(ctx.workdir, 'sample.heap')
    p = run(ctx, ['heap_sample', out], {'TCMALLOC_SAMPLE_PARAMETER': str(rate)})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    check(dumps(p.stderr) == [], 'no HEAPPROFILE dumps expected')
    prof = parse_profile(out)
    if not prof:
        return
    check(prof['kind'] == 'sampled' and prof['rate'] == rate, 'header %s/%s' % (prof['kind'], prof['rate']))
    f = per_function(ctx, prof, ['RetainA', 'RetainB'])
    for name, n, size in (('RetainA', A_N, A_SIZE), ('RetainB', B_N, B_SIZE)):
        prob = 1 - math.exp(-size / rate)
        rel_sd = math.sqrt((1 - prob) / (n * prob))
        check(abs(f[name][1] / (n * size) - 1) <= 5 * rel_sd,
              '%s in-use estimate %.0f vs %d' % (name, f[name][1], n * size))


def case_growth(ctx):
    # MallocExtension::GetHeapGrowthStacks: the stack of every page-heap growth, no sampling.
    out = os.path.join(ctx.workdir, 'growth.heap')
    p = run(ctx, ['growth', out], {})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    prof = parse_profile(out)
    if not prof:
        return
    check(prof['kind'] == 'growth', 'header kind %s, want growthz' % prof['kind'])
    grow = [r for r in prof['records']
            if r[1] and re.search(r'\bGrowTheHeap\(', function_of(ctx.syms, r[1][0]) or '')]
    check(len(grow) == 1, 'want one growth record from GrowTheHeap, got %d' % len(grow))
    if grow:
        (n, b, an, ab), pcs = grow[0]
        check(n == 1 and b >= 48 << 20 and (an, ab) == (n, b),
              'GrowTheHeap growth record %s' % ((n, b, an, ab),))
        check(any(re.search(r'\bmain\b', function_of(ctx.syms, pc) or '') for pc in pcs),
              'GrowTheHeap growth stack does not reach main')
    check(all(r[0][0] >= 1 and r[0][1] >= 2 << 20 for r in prof['records']),
          'every growth record is at least one 2 MiB growth: %s' % [r[0] for r in prof['records']])


def case_fork_growth(ctx):
    # A fork while another thread holds the growth stacks' lock (reading them): the child's own
    # heap growth, recorded under that lock, must not wait forever (the lock is held across
    # fork and released in the child). 300 forks, each child bounded by a 5 s alarm.
    p = run(ctx, ['fork_growth', '300'], {}, timeout=600)
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    m = re.search(r'^fork_growth forks (\d+) stuck (\d+)$', p.stdout, re.M)
    if check(m is not None, 'no fork_growth line: %r' % p.stdout[-300:]):
        print('fork_growth: %s forks, %s children stuck' % (m.group(1), m.group(2)))
        check(int(m.group(2)) == 0, '%s of %s children stuck growing the heap after fork' % (
            m.group(2), m.group(1)))


def case_fork_dlclose(ctx):
    # A fork while another thread is in dlclose (the shared runtime's interposer remembers the
    # closing module's mappings under a lock): the child's own dlclose must not wait forever.
    p = run(ctx, ['fork_dlclose', '300'], {}, timeout=600)
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    m = re.search(r'^fork_dlclose forks (\d+) stuck (-?\d+)$', p.stdout, re.M)
    if not check(m is not None, 'no fork_dlclose line: %r' % p.stdout[-300:]):
        return
    if int(m.group(2)) < 0:
        print('SKIP: libz.so.1 cannot be opened')
        return
    print('fork_dlclose: %s forks, %s children stuck' % (m.group(1), m.group(2)))
    check(int(m.group(2)) == 0, '%s of %s children stuck in dlclose after fork' % (
        m.group(2), m.group(1)))


def case_api(ctx):
    pre = prefix(ctx, 'api')
    p = run(ctx, ['api', pre], {})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    out = p.stdout
    for want in ('running-before 0', 'running-after-start 1', 'running-after-stop 0',
                 'profile-has-maps 1'):
        check(want in out.splitlines(), 'missing %r in %r' % (want, out))
    check(re.search(r'^profile-header heap profile: .* @ heap_v2/524288$', out, re.M) is not None,
          'GetHeapProfile header: %r' % out)
    d = dumps(p.stderr)
    check(d == [(pre + '.0001.heap', 'api dump')], 'dumps %s (no exit dump after Stop)' % d)
    if d:
        parse_profile(d[0][0])


def case_bad_input(ctx):
    # 1. unwritable directory: one line, the program runs normally.
    p = run(ctx, ['pattern'], {'HEAPPROFILE': '/nonexistent-heapkit-dir/prof'})
    check(p.returncode == 0 and 'done pattern' in p.stdout, 'program failed with a bad prefix')
    lines = [l for l in p.stderr.splitlines() if l]
    check(len(lines) == 1 and 'nonexistent-heapkit-dir' in lines[0] and 'off' in lines[0],
          'expected one clear line for the bad directory, got %s' % lines)
    # 2. malformed interval: one line, profiling continues with the default.
    p = run(ctx, ['pattern'], {'HEAPPROFILE': prefix(ctx), 'HEAP_PROFILE_INUSE_INTERVAL': 'lots'})
    bad = [l for l in p.stderr.splitlines() if 'HEAP_PROFILE_INUSE_INTERVAL' in l]
    check(len(bad) == 1, 'expected one line about the malformed interval, got %s' % bad)
    check(len(dumps(p.stderr)) == 1 and p.returncode == 0, 'profiling should continue: %s' % p.stderr)
    # 3. a signal that already has a disposition (SIGINT ignored by the parent): not stolen.
    p = run(ctx, ['pattern'], {'HEAPPROFILE': prefix(ctx, 'sig'), 'HEAPPROFILESIGNAL': '2'},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    bad = [l for l in p.stderr.splitlines() if 'HEAPPROFILESIGNAL' in l]
    check(len(bad) == 1 and 'already' in bad[0], 'expected one "already has a handler" line: %s' % bad)
    check(p.returncode == 0 and len(dumps(p.stderr)) == 1, 'profiling should continue')
    # 4. signals that cannot be used.
    for value in ('9', '99', 'usr1'):
        p = run(ctx, ['pattern'], {'HEAPPROFILE': prefix(ctx, 'sig' + value),
                                   'HEAPPROFILESIGNAL': value})
        bad = [l for l in p.stderr.splitlines() if 'HEAPPROFILESIGNAL' in l]
        check(len(bad) == 1, 'HEAPPROFILESIGNAL=%s: expected one line, got %s' % (value, bad))
        check(p.returncode == 0 and len(dumps(p.stderr)) == 1, 'HEAPPROFILESIGNAL=%s broke profiling' % value)


# slowpath mode (workload.cc SlowPath).
SLOW_THREADS, SLOW_PER_SIZE, SLOW_MAX_SIZE = 2, 16, 40000
SLOW_FUNCS = ['SlowMalloc', 'SlowNew', 'SlowCalloc', 'SlowAlignedNew']
# Functions of the runtime (nm -C names): a leaf frame in one of these means an allocator frame
# was not dropped.
RUNTIME_FN_RE = re.compile(
    r'^(heapkit::|\{lambda|operator new|operator delete|tc_|heapkit_|__libc_|'
    r'(malloc|free|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|'
    r'pvalloc|cfree|malloc_usable_size)(\.|$|\())')


def case_slowpath(ctx):
    """Every allocation sampled, made by fresh threads (empty thread caches: refill and
    page-level slow paths) through four entry points and ~35 size classes: EVERY record's leaf
    frame must be the user's allocating function, never allocator code."""
    p = run(ctx, ['slowpath'], {'HEAPPROFILE': prefix(ctx), 'TCMALLOC_SAMPLE_PARAMETER': '1',
                                'PERFTOOLS_VERBOSE': '1'})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    if ctx.flavour == 'static':
        check(re.search(r'static runtime: allocator frames from \d+ symbol ranges', p.stderr)
              is not None, 'no "allocator frames from N symbol ranges" verbose line')
    d = dumps(p.stderr)
    check(len(d) == 1, 'expected exactly one dump; got %s' % d)
    if not d:
        return
    prof = parse_profile(d[0][0])
    if prof is None:
        return
    bad = []
    for counts, pcs in prof['records']:
        if not pcs:
            continue
        fn = function_of(ctx.syms, pcs[0])
        if fn is not None and RUNTIME_FN_RE.match(fn):
            bad.append((fn, counts))
    check(not bad, '%d record(s) start with an allocator frame: %s' % (len(bad), bad[:5]))
    sizes = []
    size = 8
    while size <= SLOW_MAX_SIZE:
        sizes.append(size)
        size = size * 5 // 4 + 8
    n = SLOW_THREADS * SLOW_PER_SIZE * len(sizes)
    b = SLOW_THREADS * SLOW_PER_SIZE * sum(sizes)
    f = per_function(ctx, prof, SLOW_FUNCS)
    for name in SLOW_FUNCS:
        check(f[name] == [n, b, n, b], '%s exact %s, expected %s' % (name, f[name], [n, b, n, b]))


def case_handler_captures(ctx):
    """Exact mode with lifetimes, free stacks and the peak while a signal handler captures its
    own stack every 50 us (rewriting the thread's walk memo, which the allocation and free paths
    check unguarded): every object counted under its own call site."""
    p = run(ctx, ['handler_captures'],
            {'HEAPPROFILE': prefix(ctx), 'TCMALLOC_SAMPLE_PARAMETER': '1',
             'HEAP_PROFILE_LIFETIMES': '1', 'HEAP_PROFILE_FREE_STACKS': '1',
             'HEAP_PROFILE_PEAK': '1'})
    check(p.returncode == 0, 'exit status %d' % p.returncode)
    m = re.search(r'handler_captures (\d+) (\d+)', p.stdout)
    if not check(m is not None, 'unexpected output %r' % p.stdout):
        return
    bursts, captures = int(m.group(1)), int(m.group(2))
    # About 20 000 signals a second; fewer than 2 000 captures would not test the interleaving.
    check(captures >= 2000, 'only %d captures in the handler' % captures)
    n = bursts * 16  # kBurst objects of each site per burst
    d = dumps(p.stderr)
    if not check(d and d[-1][1].startswith('Exiting'), 'no exit dump: %s' % d):
        return
    prof = parse_profile(d[-1][0])
    if prof is None:
        return
    f = per_function(ctx, prof, ['HandlerSiteA', 'HandlerSiteB'])
    check(f['HandlerSiteA'] == [0, 0, n, n * 24], 'HandlerSiteA %s, expected [0, 0, %d, %d]' %
          (f['HandlerSiteA'], n, n * 24))
    check(f['HandlerSiteB'] == [0, 0, n, n * 40], 'HandlerSiteB %s, expected [0, 0, %d, %d]' %
          (f['HandlerSiteB'], n, n * 40))


CASES = {n[5:]: f for n, f in globals().items() if n.startswith('case_')}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--case', required=True, choices=sorted(CASES))
    ap.add_argument('--flavour', required=True, choices=['preload', 'static'])
    ap.add_argument('--program', required=True)
    ap.add_argument('--preload', required=True)
    ap.add_argument('--workdir', required=True)
    ctx = Ctx()
    args = ap.parse_args()
    ctx.flavour, ctx.program, ctx.preload, ctx.workdir = (args.flavour, args.program, args.preload,
                                                          args.workdir)
    _program_name[0] = os.path.basename(ctx.program)
    shutil.rmtree(ctx.workdir, ignore_errors=True)
    os.makedirs(ctx.workdir)
    ctx.syms = load_symbols(ctx.program)
    start = time.time()
    try:
        CASES[args.case](ctx)
    except subprocess.TimeoutExpired as e:
        check(False, 'timed out: %s' % e)
    print('%s/%s: %d failure(s) in %.1fs' % (args.flavour, args.case, len(failures),
                                             time.time() - start))
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
