#!/usr/bin/env python3
"""HEAP_PROFILE_FORMAT=legacy|proto|both against proto_workload.cc (known stacks pa..pe).

Every run sets HEAP_PROFILE_PEAK, _LIFETIMES, _FREE_STACKS and _AGES, so each dump and peak
profile carries every kind of line the profile.proto conversion handles. Checks:
  - which files each format writes: legacy only the .heap files; both each .heap and its
    .heap.pb.gz; proto the .pb.gz files alone;
  - the legacy files of a `both` run are those of a `legacy` run: same header and record lines
    (exact mode, address randomization off, so the PCs agree; comment lines carry times and
    memory figures and differ from run to run anyway) and the same kinds of comment lines;
  - each .pb.gz decoded here (a wire decoder of its own, not the runtime's encoder) against its
    legacy twin: sample types named as Go and tcmalloc name them, the period, time_nanos (the
    peak's own time for peak profiles), per stack the four heap values equal to the legacy
    line un-sampled as the pprofs do (rounded: within 1), per lifetime line one sample with
    its estimate in allocated_* and deallocated_* or censored_allocated_*, labels lifetime,
    lifetime_ns and same_thread as the line says, and for a freed line with its free stack a
    pair instead (allocated_* on the allocation stack, deallocated_* on the free stack, one
    callstack-pair-id); the program's mapping with its
    file name and build ID (readelf), locations at return address - 1;
  - go tool pprof -raw reads the .pb.gz files and its totals per sample type equal the legacy
    file's totals as go pprof reads that (within 1 per sample: rounding); skipped with one line
    when go is not installed;
  - pprof-tool prints the same text (up to the rounding of whole bytes per stack:
    same_up_to_rounding) for the legacy and the proto file of a dump: top, traces,
    alloc_space, --peak, --lifetime='<1ms', --lifetime=cross, --since=1; and in a proto-only run
    --peak and --since find their proto siblings;
  - dumps fired by the allocation trigger (inside an allocation's sampling callback) have
    their proto files too;
  - a bad value is one line and legacy files; a symbolic link planted at a .pb.gz name is not
    followed (the target is unchanged, one line names the file, the legacy file is written).
"""
import argparse
import gzip
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import check, verdict  # noqa: E402

PERIOD = 65536
DUMPS = ['p.0001.heap', 'p.0002.heap', 'p.peak.0001.heap', 'p.peak.0002.heap', 'p.peak.heap']
HEAP_TYPES = [('alloc_objects', 'count'), ('alloc_space', 'bytes'), ('inuse_objects', 'count'),
              ('inuse_space', 'bytes')]
# A sampled dump's records carry their sampling variance (legacy_writer.h's variance lines):
# these four types then follow Go's four, each the variance of the value it names.
VARIANCE_TYPES = [('alloc_objects_variance', 'count^2'), ('alloc_space_variance', 'bytes^2'),
                  ('inuse_objects_variance', 'count^2'), ('inuse_space_variance', 'bytes^2')]
VARIANCE_PREFIX = '# heapkit: variance '
LIFETIME_TYPES = [('allocated_objects', 'count'), ('allocated_space', 'bytes'),
                  ('deallocated_objects', 'count'), ('deallocated_space', 'bytes'),
                  ('censored_allocated_objects', 'count'), ('censored_allocated_space', 'bytes')]
DECADES = ['<1us', '1us-10us', '10us-100us', '100us-1ms', '1ms-10ms', '10ms-100ms', '100ms-1s',
           '1s-10s', '10s-100s', '100s-1000s', '1000s-1h', '>=1h']
RECORD_RE = re.compile(r'^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\]\s*@((?: 0x[0-9a-f]+)*)$')
LIFETIME_RE = re.compile(r'^# heapkit: lifetime (\d+) (same|cross|live) (\d+) (\d+) (\d+) @'
                         r'((?: 0x[0-9a-f]+)*)(?: \| ((?:0x[0-9a-f]+ ?)*))?$')


# --- a protobuf wire decoder (varints, length-delimited; enough for profile.proto) ---
def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7f) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(buf):
    """[(field, wire, value)] of one message; value is int or bytes."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            v, i = bytes(buf[i:i + n]), i + n
        else:
            raise ValueError('unexpected wire type %d' % wire)
        out.append((field, wire, v))
    return out


def ints(wire, v):
    """A repeated integer field's values, packed or not."""
    if wire == 0:
        return [v]
    vals, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        vals.append(x)
    return vals


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def decode_profile(path):
    data = gzip.decompress(open(path, 'rb').read())
    p = {'strings': [], 'types': [], 'samples': [], 'mappings': {}, 'locations': {},
         'comments': [], 'time': 0, 'period': 0, 'period_type': None, 'default': 0}
    for f, w, v in fields(data):
        if f == 6:
            p['strings'].append(v.decode())
        elif f == 1:
            d = dict((ff, vv) for ff, _, vv in fields(v))
            p['types'].append((d.get(1, 0), d.get(2, 0)))
        elif f == 2:
            s = {'locs': [], 'values': [], 'labels': []}
            for ff, ww, vv in fields(v):
                if ff == 1:
                    s['locs'] += ints(ww, vv)
                elif ff == 2:
                    s['values'] += [signed(x) for x in ints(ww, vv)]
                elif ff == 3:
                    s['labels'].append(dict((k, x) for k, _, x in fields(vv)))
            p['samples'].append(s)
        elif f == 3:
            d = dict((ff, vv) for ff, _, vv in fields(v))
            p['mappings'][d[1]] = d
        elif f == 4:
            d = dict((ff, vv) for ff, _, vv in fields(v) if ff != 4)
            p['locations'][d[1]] = d
        elif f == 13:
            p['comments'] += ints(w, v)
        elif f == 9:
            p['time'] = v
        elif f == 12:
            p['period'] = v
        elif f == 11:
            d = dict((ff, vv) for ff, _, vv in fields(v))
            p['period_type'] = (d.get(1, 0), d.get(2, 0))
        elif f == 14:
            p['default'] = v
    st = p['strings']
    check(st and st[0] == '', path + ': string_table[0] is ""')
    p['types'] = [(st[t], st[u]) for t, u in p['types']]
    p['comments'] = [st[c] for c in p['comments']]
    for s in p['samples']:
        s['pcs'] = [p['locations'][i].get(3, 0) + 1 for i in s['locs']]
        s['str'] = {st[l[1]]: st[l.get(2, 0)] for l in s['labels'] if l.get(2, 0)}
        s['num'] = {st[l[1]]: (signed(l.get(3, 0)), st[l.get(4, 0)]) for l in s['labels']
                    if not l.get(2, 0)}
    return p


# --- the legacy file, un-sampled as the pprofs do ---
def scale(count, size, period):
    if count <= 0 or size <= 0 or period <= 1:
        return 1.0
    return 1.0 / (1.0 - math.exp(-(size / count) / period))


def read_legacy(path):
    lines = open(path).read().split('\n')
    period = 1
    m = re.search(r'heap_v2/(\d+)', lines[0])
    if m:
        period = int(m.group(1))
    records, lifetimes, comments, variances = {}, [], [], {}
    variance = None  # the variance line before the next record
    for line in lines[1:]:
        if line.startswith('MAPPED_LIBRARIES:'):
            break
        if line.startswith(VARIANCE_PREFIX):
            inuse_n, inuse_b, alloc_n, alloc_b = (float(x) for x in line[len(VARIANCE_PREFIX):].split())
            variance = (alloc_n, alloc_b, inuse_n, inuse_b)  # in the proto's order
            continue
        if line.startswith('#'):
            comments.append(line)
            m = LIFETIME_RE.match(line)
            if m:
                lifetimes.append(m)
            continue
        m = RECORD_RE.match(line)
        if m:
            n1, b1, n2, b2 = (int(m.group(i)) for i in range(1, 5))
            pcs = tuple(int(x, 16) for x in m.group(5).split())
            s1, s2 = scale(n1, b1, period), scale(n2, b2, period)
            records[pcs] = (n2 * s2, b2 * s2, n1 * s1, b1 * s1)
            if variance is not None:  # a stack may have several records (one per size)
                variances.setdefault(pcs, []).append(variance)
            variance = None
    return {'header': lines[0], 'period': period, 'records': records, 'lifetimes': lifetimes,
            'comments': comments, 'variances': variances, 'text': lines}


def variance_value(v):
    """heap_sample_values.h's VarianceSampleValue."""
    if v <= 0:
        return 0
    return min(2**63 - 1, max(1, int(v + 0.5)))


def build_id(program):
    out = subprocess.run(['readelf', '-n', program], capture_output=True, text=True).stdout
    m = re.search(r'Build ID: ([0-9a-f]+)', out)
    return m.group(1) if m else ''


def check_pair(legacy_path, proto_path, program):
    name = os.path.basename(legacy_path)
    leg = read_legacy(legacy_path)
    p = decode_profile(proto_path)
    has_lifetimes = bool(leg['lifetimes'])
    has_variance = bool(leg['variances'])
    check(has_variance == (leg['period'] > 1 and 'peak' not in name),
          '%s: variance lines in a sampled dump (only): %d' % (name, len(leg['variances'])))
    want_types = HEAP_TYPES + (VARIANCE_TYPES if has_variance else []) + (
        LIFETIME_TYPES if has_lifetimes else [])
    check(p['types'] == want_types, '%s: sample types %s' % (name, p['types']))
    check(p['period'] == leg['period'], '%s: period %d, legacy %d' % (name, p['period'], leg['period']))
    check(p['period_type'] is not None and p['strings'][p['period_type'][0]] == 'space',
          name + ': period_type space/bytes')
    check(p['strings'][p['default']] == 'inuse_space', name + ': default sample type inuse_space')
    check(p['comments'] == [c for c in leg['text'][1:]
                            if c.startswith('#') and not c.startswith(VARIANCE_PREFIX)],
          name + ': the comment lines of the legacy file are the Profile.comment strings, in order')
    # Time: the dump time line, or the peak's unix time.
    reason = next((c for c in leg['comments'] if c.startswith('# heapkit: dump reason:')), '')
    m = re.search(r'unix time (\d+)\.(\d+)', reason) or re.search(
        r'dump time: (\d+)\.(\d+)', ' '.join(leg['comments']))
    if check(m is not None, name + ': a time in the legacy file'):
        want = int(m.group(1)) * 10**9 + int(m.group(2)) * 10**6
        check(p['time'] == want, '%s: time_nanos %d, legacy says %d' % (name, p['time'], want))
    heap = [s for s in p['samples'] if any(s['values'][:4])]
    got = {}
    for s in heap:
        got[tuple(s['pcs'])] = s['values'][:4]
        check('bytes' in s['num'], name + ': heap samples carry the bytes label')
    want_records = {k: v for k, v in leg['records'].items() if any(v)}
    check(set(got) == set(want_records), '%s: %d heap samples, legacy %d records' %
          (name, len(got), len(want_records)))
    for pcs, v in want_records.items():
        g = got.get(pcs)
        if g is not None:
            check(all(abs(g[i] - v[i]) <= 1 for i in range(4)),
                  '%s: stack %x: proto %s, legacy un-sampled %s' % (name, pcs[0], g, v))
    if has_variance:  # every record's four variances, as its variance line gives them
        check(set(leg['variances']) == set(leg['records']),
              name + ': every record of a sampled dump has its variance line')
        proto_variances = {}
        for s in heap:
            proto_variances.setdefault(tuple(s['pcs']), []).append(s['values'][4:8])
        for pcs, lines in leg['variances'].items():
            want = sorted([variance_value(x) for x in v] for v in lines)
            g = sorted(proto_variances.get(pcs, []))
            if not any(any(v) for v in want) and not g:
                continue  # records whose values are all zero have no sample
            check(g == want, '%s: stack %x: variances %s, legacy %s' % (name, pcs[0], g, want))
    if has_lifetimes:
        check_lifetimes(name, leg, p, 8 if has_variance else 4)
    print('%s: %d heap samples, %d lifetime samples, %d comments checked' %
          (name, len(want_records), len(leg['lifetimes']), len(p['comments'])))
    prog_maps = [m for m in p['mappings'].values()
                 if p['strings'][m.get(5, 0)] == os.path.realpath(program)]
    if check(prog_maps, name + ': a mapping names the program'):
        check(p['strings'][prog_maps[0].get(6, 0)] == build_id(program),
              name + ': the program mapping carries its build ID')
    return leg, p


def check_lifetimes(name, leg, p, first):
    """Per lifetime line one sample on its allocation stack; a freed line with a free stack a
    pair (tcmalloc's stack pairs): allocated_* on the allocation stack, deallocated_* on the
    free stack, the same labels and one callstack-pair-id of their own."""
    life = [s for s in p['samples'] if 'lifetime' in s['str']]
    want = sum(2 if m.group(7) and m.group(7).strip() else 1 for m in leg['lifetimes'])
    check(len(life) == want, '%s: %d lifetime samples, %d for the lines' % (name, len(life), want))
    pair_ids, at = set(), 0
    for m in leg['lifetimes']:
        if at >= len(life):
            break
        bin_ns, end, est = int(m.group(1)), m.group(2), int(m.group(5))
        pcs = [int(x, 16) for x in m.group(6).split()]
        free_pcs = [int(x, 16) for x in (m.group(7) or '').split()]
        pair = life[at:at + 2] if free_pcs else life[at:at + 1]
        at += len(pair)
        s = pair[0]
        v = s['values']
        check(s['pcs'] == pcs, name + ': a lifetime sample on its allocation stack')
        idx = min(range(len(DECADES)), key=lambda i: abs(([0] + [10**(3 + k) for k in range(10)]
                                                           + [3600 * 10**9])[i] - bin_ns))
        for t in pair:
            check(t['num'].get('lifetime_ns') == (bin_ns, 'nanoseconds'), name + ': lifetime_ns')
            check(t['str'].get('lifetime') == DECADES[idx], '%s: lifetime %s for %d ns' %
                  (name, t['str'].get('lifetime'), bin_ns))
            if end != 'live':
                check(t['str'].get('same_thread') == ('true' if end == 'same' else 'false'),
                      name + ': same_thread')
            check('free_stack' not in t['str'], name + ': no free_stack label')
        check(v[first + 1] == est, name + ': allocated_space is the estimated bytes')
        if end == 'live':
            check(v[first + 5] == est and v[first + 3] == 0 and 'same_thread' not in s['str'],
                  name + ': a live line is censored')
        elif not free_pcs:
            check(v[first + 3] == est and v[first + 5] == 0 and 'callstack-pair-id' not in s['num'],
                  name + ': a freed line without its free stack is deallocated on one sample')
        elif check(len(pair) == 2, name + ': a freed line with its free stack is a pair'):
            f = pair[1]
            check(v[first + 3] == 0 and v[first + 5] == 0, name + ': the pair\'s allocation sample: allocated_*')
            check(f['pcs'] == free_pcs, name + ': the pair\'s second sample on the free stack')
            check(f['values'][first + 3] == est and f['values'][first + 1] == 0 and f['values'][first + 5] == 0,
                  name + ': the free stack\'s sample: deallocated_*')
            ids = [t['num'].get('callstack-pair-id') for t in pair]
            check(ids[0] == ids[1] and ids[0] is not None and ids[0][1] == 'count' and
                  ids[0][0] > 0 and ids[0][0] not in pair_ids,
                  name + ': one callstack-pair-id of their own: %r' % ids)
            pair_ids.add(ids[0][0] if ids[0] else None)


def run(args, fmt, period, workdir, extra_env=None):
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    env = dict(os.environ)
    env.pop('HEAP_PROFILE_FORMAT', None)
    ours = {'HEAPPROFILE': os.path.join(workdir, 'p'), 'HEAP_PROFILE_PEAK': '1',
            'HEAP_PROFILE_LIFETIMES': '1', 'HEAP_PROFILE_FREE_STACKS': '1',
            'HEAP_PROFILE_AGES': '1', 'TCMALLOC_SAMPLE_PARAMETER': str(period),
            'LD_PRELOAD': args.preload}
    if fmt is not None:
        ours['HEAP_PROFILE_FORMAT'] = fmt
    ours.update(extra_env or {})
    # Address randomization off, so that two runs give the same PCs; setarch and env are not
    # profiled themselves (an exec'd child would write <prefix>_<pid> files).
    cmd = ['env'] + ['%s=%s' % kv for kv in sorted(ours.items())] + [args.program]
    if shutil.which('setarch'):
        cmd = ['setarch', os.uname().machine, '-R'] + cmd
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, '%s run exits 0 (%s)' % (fmt, r.stderr[-300:]))
    return r.stderr


def records_and_comment_kinds(path):
    leg = read_legacy(path)
    kinds = sorted(set(' '.join(c.split()[:3]) for c in leg['comments']))
    recs = [l for l in leg['text'][1:] if RECORD_RE.match(l)]
    return leg['header'], sorted(recs), kinds


def go_totals(path, program):
    r = subprocess.run(['go', 'tool', 'pprof', '-raw', program, path], capture_output=True,
                       text=True, timeout=120)
    if not check(r.returncode == 0, 'go tool pprof -raw reads ' + path + ': ' + r.stderr[-300:]):
        return None, 0
    lines = r.stdout.split('\n')
    start = lines.index('Samples:')
    names = [t.split('/')[0] for t in lines[start + 1].replace('[dflt]', '').split()]
    totals, n = dict.fromkeys(names, 0), 0
    for line in lines[start + 2:]:
        if line.startswith('Locations'):
            break
        m = re.match(r'^\s*((?:-?\d+\s+)+)-?\d*:', line) if ':' in line else None
        if m and not line.strip().startswith(('bytes', 'lifetime', 'callstack-pair-id')):
            vals = line.split(':')[0].split()
            if len(vals) == len(names) and all(re.match(r'^-?\d+$', x) for x in vals):
                n += 1
                for k, x in zip(names, vals):
                    totals[k] += int(x)
    return totals, n


NUMBER_RE = re.compile(r'-?\d+(?:\.\d+)?')


def same_up_to_rounding(a, b):
    """The same text but for numbers that differ by the rounding of profile.proto: it holds whole
    objects and bytes per stack where the legacy reader keeps the un-sampled fractions, so a
    figure summed over many lines of small objects can differ by up to 0.5 byte per line, i.e.
    by one in the last printed digit of a kB figure."""
    ta, tb = NUMBER_RE.split(a), NUMBER_RE.split(b)
    na, nb = NUMBER_RE.findall(a), NUMBER_RE.findall(b)
    if ta != tb or len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        fx, fy = float(x), float(y)
        if abs(fx - fy) > 0.011 + 1e-4 * abs(fx):
            return False
    return True


def interval_note(text):
    """(the report's "Intervals: ..." line or None, the report without it)."""
    lines = text.split('\n')
    notes = [l for l in lines if l.startswith('Intervals: ')]
    return (notes[0] if notes else None,
            '\n'.join(l for l in lines if not l.startswith('Intervals: ')))


def pprof_tool(args, view, path):
    r = subprocess.run([args.pprof_tool] + view + [args.program, path], capture_output=True,
                       text=True, timeout=120)
    return r.returncode, r.stdout.replace(path, '<file>').replace(
        path.replace('.pb.gz', ''), '<file>') + r.stderr


def main():
    ap = argparse.ArgumentParser()
    for a in ('program', 'preload', 'pprof_tool', 'workdir'):
        ap.add_argument('--' + a, required=True)
    args = ap.parse_args()
    w = lambda name: os.path.join(args.workdir, name)  # noqa: E731

    # Which files each format writes.
    run(args, None, 1, w('legacy_exact'))
    run(args, 'both', 1, w('both_exact'))
    run(args, 'legacy', PERIOD, w('legacy'))
    run(args, 'both', PERIOD, w('both'))
    run(args, 'proto', PERIOD, w('proto'))
    for d, want in (('legacy_exact', DUMPS), ('legacy', DUMPS),
                    ('both', DUMPS + [f + '.pb.gz' for f in DUMPS]),
                    ('proto', [f + '.pb.gz' for f in DUMPS])):
        got = sorted(f for f in os.listdir(w(d)) if not f.startswith('p.timeline'))
        check(got == sorted(want), '%s writes %s, found %s' % (d, sorted(want), got))

    # Legacy files of a `both` run are a `legacy` run's (exact mode: the same records).
    for f in DUMPS:
        a = records_and_comment_kinds(os.path.join(w('legacy_exact'), f))
        b = records_and_comment_kinds(os.path.join(w('both_exact'), f))
        check(a == b, f + ': legacy file of HEAP_PROFILE_FORMAT=both equals HEAP_PROFILE_FORMAT '
              'unset (header, records, kinds of comment lines)')

    # Each proto file against its legacy twin, sampled and exact.
    for d in ('both', 'both_exact'):
        for f in DUMPS:
            check_pair(os.path.join(w(d), f), os.path.join(w(d), f + '.pb.gz'), args.program)

    # go tool pprof: totals per sample type of the proto == of the legacy file.
    if shutil.which('go') is None:
        print('SKIP: go not installed: go tool pprof checks skipped')
    else:
        for f in ('p.0002.heap', 'p.peak.0001.heap'):
            leg, n1 = go_totals(os.path.join(w('both'), f), args.program)
            pro, n2 = go_totals(os.path.join(w('both'), f + '.pb.gz'), args.program)
            if leg is None or pro is None:
                continue
            if 'space' in leg:  # go pprof reads a legacy file whose alloc columns are all 0
                leg = {'inuse_objects': leg['objects'], 'inuse_space': leg['space']}
            for k in sorted(leg):
                check(abs(leg[k] - pro.get(k, -1)) <= max(n1, n2),
                      '%s: go pprof %s: legacy %d, proto %d' % (f, k, leg[k], pro[k]))
            check(pro.get('deallocated_space', 0) > 0 or f.startswith('p.peak'),
                  f + ': go pprof shows deallocated_space')
            check(pro.get('inuse_space_variance', 0) > 0 or f.startswith('p.peak'),
                  f + ': go pprof reads the variance sample types')

    # pprof-tool: the same views from either file.
    views = [['--text'], ['--traces'], ['--text', '--sample_index=alloc_space'],
             ['--peak', '--text'], ['--lifetime=<1ms', '--text'], ['--lifetime=cross', '--text'],
             ['--since=1', '--text']]
    leg_path, pro_path = os.path.join(w('both'), 'p.0002.heap'), os.path.join(w('both'), 'p.0002.heap.pb.gz')
    for v in views:
        a, b = pprof_tool(args, v, leg_path), pprof_tool(args, v, pro_path)
        # The intervals' note may differ, and only so, for the time views (peak profile,
        # lifetime and age lines), whose variances are derived: the legacy dump's rows are keyed
        # by stack and size, profile.proto's by stack.
        note_a, text_a = interval_note(a[1])
        note_b, text_b = interval_note(b[1])
        check((note_a is None) == (note_b is None),
              'pprof-tool %s: one file has the intervals note, the other not' % ' '.join(v))
        check(a[0] == 0 and b[0] == 0 and same_up_to_rounding(text_a, text_b), 'pprof-tool %s: proto file prints as the legacy one:\n%s\n---\n%s'
              % (' '.join(v), a[1][:600], b[1][:600]))
    # Both files carry the profiler's variance per record (legacy_writer.h's variance lines,
    # the proto's *_variance sample types): the record views' intervals are the recorded ones
    # in both, the same but for the proto's rounding.
    # (Object counts are left out: the proto's are whole per sample, so their sums differ.)
    for v in (['--text', '--error_bars'], ['--top', '--error_bars', '--sample_index=alloc_space']):
        a, b = pprof_tool(args, v, leg_path), pprof_tool(args, v, pro_path)
        note_a, text_a = interval_note(a[1])
        note_b, text_b = interval_note(b[1])
        check(note_a == note_b and note_a is not None and 'recorded' in note_a,
              'pprof-tool %s: the intervals are not the recorded ones in both files: %r, %r'
              % (' '.join(v), note_a, note_b))
        check(a[0] == 0 and b[0] == 0 and same_up_to_rounding(text_a, text_b),
              'pprof-tool %s: the proto file\'s intervals are the legacy one\'s:\n%s\n---\n%s'
              % (' '.join(v), a[1][:600], b[1][:600]))
    for v in (['--peak', '--text'], ['--since=1', '--text']):
        rc, out = pprof_tool(args, v, os.path.join(w('proto'), 'p.0002.heap.pb.gz'))
        check(rc == 0 and ('Peak' in out or 'Since dump 1' in out),
              'pprof-tool %s in a proto-only run: %s' % (' '.join(v), out[:300]))

    # Dumps fired by the allocation trigger run inside the sampling callback of an allocation
    # (where nothing may call malloc): each still gets its proto file, which decodes.
    run(args, 'both', PERIOD, w('trigger'), {'HEAP_PROFILE_ALLOCATION_INTERVAL': '16m'})
    heaps = sorted(f for f in os.listdir(w('trigger')) if re.match(r'^p\.\d{4}\.heap$', f))
    check(len(heaps) >= 5, 'the allocation trigger wrote %d dumps, want >= 5' % len(heaps))
    for f in heaps:
        if check(os.path.exists(os.path.join(w('trigger'), f + '.pb.gz')), f + '.pb.gz written'):
            check_pair(os.path.join(w('trigger'), f), os.path.join(w('trigger'), f + '.pb.gz'),
                       args.program)

    # A bad value: one line, legacy files.
    err = run(args, 'xml', PERIOD, w('bad'))
    lines = [l for l in err.split('\n') if 'HEAP_PROFILE_FORMAT' in l]
    check(len(lines) == 1 and "ignoring HEAP_PROFILE_FORMAT='xml'" in lines[0] and
          'legacy' in lines[0], 'a bad value is one line: %s' % lines)
    check(not any(f.endswith('.pb.gz') for f in os.listdir(w('bad'))), 'a bad value writes legacy')

    # A link planted at a proto name is not followed.
    link_dir = w('link')
    victim = w('victim')
    shutil.rmtree(link_dir, ignore_errors=True)
    os.makedirs(link_dir)
    with open(victim, 'w') as v:
        v.write('not yours\n')
    os.symlink(victim, os.path.join(link_dir, 'p.0001.heap.pb.gz'))
    env_dir = link_dir
    err = run_in(args, env_dir)
    check(open(victim).read() == 'not yours\n', 'the link target is unchanged')
    check(os.path.islink(os.path.join(link_dir, 'p.0001.heap.pb.gz')), 'the link is left alone')
    check(os.path.exists(os.path.join(link_dir, 'p.0001.heap')), 'the legacy file is written')
    check(any('failed to write heap profile' in l and 'p.0001.heap.pb.gz' in l
              for l in err.split('\n')), 'one line names the refused proto file: ' + err[-400:])

    return verdict('profile.proto file')


def run_in(args, directory):
    """A `both` run into an existing directory (the planted link stays)."""
    env = dict(os.environ)
    env.update({'HEAPPROFILE': os.path.join(directory, 'p'), 'HEAP_PROFILE_FORMAT': 'both',
                'TCMALLOC_SAMPLE_PARAMETER': str(PERIOD), 'LD_PRELOAD': args.preload})
    r = subprocess.run([args.program], env=env, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, 'link run exits 0')
    return r.stderr


if __name__ == '__main__':
    sys.exit(main())
