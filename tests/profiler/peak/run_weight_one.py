#!/usr/bin/env python3
"""The sampled path's estimates at weight one, with each time setting, against the truth.

weight_one_workload.cc allocates objects of 4 KiB and more by malloc, calloc, posix_memalign
and aligned_alloc, resizes them by realloc in place and by moving, and frees temporaries at
once. At TCMALLOC_SAMPLE_PARAMETER=64 every such object is sampled (probability
1 - exp(-64)) and its Horvitz-Thompson weight s / p(s) is s exactly (alloc/sample_weight.h),
so the sampled path (live-object-map records, births in them, the peak tracker fed by sampled
events) must give the exact figures of exact mode. Per setting (off, lifetimes + ages,
lifetimes, ages, lifetimes + free stacks) the test runs the workload at period 64 and in exact
mode and checks, against the program's own account:
  * the peak profile's estimated bytes (prof.peak.heap) equal its peak;
  * the in-use bytes of its dump at the top of the growth (un-sampled like the pprofs) equal
    its live bytes then (the interval dumps before it, one per GiB allocated, give the ages
    several dump intervals);
  * the exit dump's in-use bytes equal its live bytes at exit plus stdout's buffer (allocated by
    the printf that reports them), the same in every run.
A record lost or counted twice on one of these paths with a setting on shows as a difference of
at least 4 KiB.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import legacy_dump  # noqa: E402
from driver_checks import check, fresh_dir, profile_workload, verdict, workload_args  # noqa: E402

SETTINGS = {
    'off': {},
    'lifetimes+ages': {'HEAP_PROFILE_LIFETIMES': '1', 'HEAP_PROFILE_AGES': '1'},
    'lifetimes': {'HEAP_PROFILE_LIFETIMES': '1'},
    'ages': {'HEAP_PROFILE_AGES': '1'},
    'free stacks': {'HEAP_PROFILE_LIFETIMES': '1', 'HEAP_PROFILE_FREE_STACKS': '1'},
}


def checked(read, *args):
    """read(*args), or None after a failed check that names what the dump lacks."""
    try:
        return read(*args)
    except (legacy_dump.DumpError, OSError) as e:
        check(False, str(e))
        return None


def in_use(prefix, reason):
    """The in-use bytes, as the pprofs estimate them, of the dump <prefix>.NNNN.heap whose reason
    starts with `reason` (interval dumps, every 1 GiB allocated, come before the workload's own)."""
    path = checked(legacy_dump.dump_with_reason, prefix, reason)
    estimate = checked(legacy_dump.in_use_estimate, path) if path else None
    return None if estimate is None else round(estimate)


def main():
    args = workload_args()
    base = args.workdir
    exit_values = set()
    for name, env in SETTINGS.items():
        for rate in ('64', '1'):
            what = '%s at period %s' % (name, rate)
            args.workdir = fresh_dir(os.path.join(base, '%s-%s' % (name.replace(' ', '_'), rate)))
            p = profile_workload(args, 120, TCMALLOC_SAMPLE_PARAMETER=rate, HEAP_PROFILE_PEAK='1',
                                 **env)
            if p is None:
                continue
            truth = dict((k, int(v)) for k, v in (l.split() for l in p.stdout.split('\n') if l))
            check(truth['in_place_reallocs'] > 5000 and truth['moved_reallocs'] > 5000,
                  '%s: the workload resized in place %d times and by moving %d times' %
                  (what, truth['in_place_reallocs'], truth['moved_reallocs']))
            prof = os.path.join(args.workdir, 'prof')
            peak = checked(legacy_dump.peak_estimate, prof + '.peak.heap')
            check(peak == truth['peak'], '%s: peak estimate %s, the program\'s peak %d' %
                  (what, peak, truth['peak']))
            dumped = in_use(prof, 'top of the growth')
            check(dumped == truth['dump_in_use'], '%s: in-use at the dump %s, the program\'s %d' %
                  (what, dumped, truth['dump_in_use']))
            at_exit = in_use(prof, 'Exiting')
            if at_exit is not None:
                extra = at_exit - truth['exit_in_use']  # stdout's buffer
                check(0 <= extra <= 65536, '%s: in-use at exit %d, the program\'s %d' %
                      (what, at_exit, truth['exit_in_use']))
                exit_values.add(at_exit)
            print('%-26s peak %s  dump %s  exit %s' % (what, peak, dumped, at_exit))
    check(len(exit_values) == 1, 'the exit dumps differ between runs: %s' % sorted(exit_values))
    return verdict('weight-one')


if __name__ == '__main__':
    sys.exit(main())
