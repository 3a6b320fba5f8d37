#!/usr/bin/env python3
"""Prints why each skipped test was skipped, one line each.

ctest's own summary names skipped tests ("The following tests did not run: ... (Skipped)") but
keeps their output only in Testing/Temporary/LastTest.log; a skipping test prints one line
starting "SKIP:" before exiting 77. Usage: skip_reasons.py <ctest console log> <LastTest.log>
"""
import re
import sys


def skipped_tests(console):
    return re.findall(r"^\s*\d+ - (\S+) \(Skipped\)\s*$", console, re.M)


def outputs(last_test_log):
    """Test name -> its output, from ctest's LastTest.log."""
    result = {}
    for m in re.finditer(r'^"(\S+)" start time:.*?\nOutput:\n-+\n(.*?)<end of output>',
                         last_test_log, re.M | re.S):
        result[m.group(1)] = m.group(2)
    return result


def reason(output):
    lines = [l.strip() for l in (output or "").splitlines()]
    said = [l for l in lines if re.match(r"^(\S+: )?SKIP\b", l)]
    if said:
        return re.sub(r"^(\S+: )?SKIP( \[[^]]*\])?:?\s*", "", said[-1])
    return "(no reason printed; last line: %r)" % lines[-1] if lines and lines[-1] else "(no output)"


def main():
    console = open(sys.argv[1], errors="replace").read()
    try:
        log = open(sys.argv[2], errors="replace").read()
    except OSError:
        log = ""
    names = skipped_tests(console)
    if not names:
        return
    out = outputs(log)
    print("\nSkipped tests and why (%d):" % len(names))
    for name in names:
        print("  %s: %s" % (name, reason(out.get(name))))


if __name__ == "__main__":
    main()
