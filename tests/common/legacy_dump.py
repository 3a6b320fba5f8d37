"""Reading heapkit's legacy heap dumps in the test and benchmark scripts.

A dump is gperftools' text format (profiler/README.md, "Dump format"): the header
`heap profile: ... @ heap_v2/<rate>` (sampled) or `@ heapprofile` (exact mode), heapkit's
`# heapkit: ...` lines, one record `<in-use count>: <in-use bytes> [<alloc count>: <alloc bytes>]
@ <pcs>` per stack, then MAPPED_LIBRARIES. The estimates are the pprofs' own: each record's
bytes un-sampled at its mean size, bytes / (1 - exp(-(bytes / count) / rate)).

Every reader raises DumpError naming the file and what it lacks; each caller reports it its own
way (a test as a failed check, a benchmark by stopping).
"""
import math
import os
import re


class DumpError(Exception):
    pass


HEADER = re.compile(r'^heap profile:.*@\s*(?:heap_v2/(\d+)|heapprofile)\s*$')
RECORD = re.compile(r'^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@'
                    r'((?:\s+0x[0-9a-fA-F]+)*)\s*$')
PEAK = re.compile(r'^# heapkit: dump reason: peak profile: .*\(estimated (\d+) bytes;')
REASON = '# heapkit: dump reason: '


def unsample(count, nbytes, rate):
    """The pprofs' estimate of the bytes a record of `count` sampled objects stands for."""
    if count <= 0 or nbytes <= 0:
        return 0.0
    if rate <= 1:
        return float(nbytes)
    return nbytes / -math.expm1(-nbytes / count / rate)


def read(path):
    """(rate, records): rate 1 in exact mode; each record (count, bytes, alloc count,
    alloc bytes, [pcs])."""
    with open(path) as f:
        lines = f.read().split('\n')
    m = HEADER.match(lines[0])
    if m is None:
        raise DumpError('%s: no heap profile header: %r' % (path, lines[0][:80]))
    rate = int(m.group(1) or 1)
    records = []
    for line in lines[1:]:
        if line.startswith('MAPPED_LIBRARIES'):
            break
        r = RECORD.match(line)
        if r:
            records.append((int(r.group(1)), int(r.group(2)), int(r.group(3)), int(r.group(4)),
                            [int(pc, 16) for pc in r.group(5).split()]))
    return rate, records


def in_use_estimate(path):
    """The dump's in-use bytes as the pprofs estimate them."""
    rate, records = read(path)
    return sum(unsample(n, b, rate) for n, b, _, _, _ in records)


def peak_estimate(path):
    """The estimated bytes a peak profile (<prefix>.peak.heap) states in its reason line."""
    with open(path) as f:
        for line in f:
            m = PEAK.match(line)
            if m:
                return int(m.group(1))
    raise DumpError('%s: no peak profile reason line' % path)


def dump_with_reason(prefix, reason):
    """The first numbered dump <prefix>.NNNN.heap whose reason line starts with `reason`
    (e.g. 'Exiting', 'top of the growth', '1024 MB allocated cumulatively')."""
    folder = os.path.dirname(prefix) or '.'
    pattern = re.escape(os.path.basename(prefix)) + r'\.\d{4}\.heap'
    for name in sorted(os.listdir(folder)):
        if re.fullmatch(pattern, name):
            path = os.path.join(folder, name)
            with open(path) as f:
                f.readline()
                if f.readline().startswith(REASON + reason):
                    return path
    raise DumpError('%s: no dump whose reason is %r' % (prefix, reason))
