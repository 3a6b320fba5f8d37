"""What the profiler's Python test drivers share: a check that records its failure and goes
on (the driver exits 1 at the end if `failures` is not empty), and the program's function
symbols from nm, for naming the raw PCs of a dump.

A driver imports it after putting this folder on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    from script_checks import check, failures, load_symbols
"""
import subprocess

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)
    return cond


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
