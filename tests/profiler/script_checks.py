"""What the profiler's Python test drivers share: a check that records its failure and goes
on, the verdict that ends a driver (exit 1 if any check failed), the environment without the
caller's heapkit and gperftools variables, and the program's function symbols from nm, for
naming the raw PCs of a dump.

A driver imports it after putting this folder on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    from script_checks import check, clean_env, load_symbols, verdict
"""
import os
import subprocess

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)
    return cond


def verdict(what):
    """The driver's exit status: 1 with the number of failed checks, else 0 with `all <what>
    checks passed`."""
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    print('all %s checks passed' % what)
    return 0


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
