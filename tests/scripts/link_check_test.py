#!/usr/bin/env python3
"""link_check.py on a small repository whose links are known: it must name exactly the broken
ones (a missing file, a missing anchor, a link out of the repository) and exit 1, pass the good
ones (files, folders, GitHub anchors of headings with code, punctuation and repeats, links in
code left alone), and exit 0 once the broken ones are gone.
Usage: link_check_test.py   (exit 0 when every expectation holds)
"""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'link_check.py')

GOOD = '''# Top

## Environment (defaults)
## USDT probes (`usdt_probes.h`)
## Moving objects between tiers (thread cache ↔ central)
## Repeat
## Repeat

[a file](sub/other.md) [a folder](sub/) [an anchor](#environment-defaults)
[code in a heading](#usdt-probes-usdt_probesh) [an arrow](#moving-objects-between-tiers-thread-cache--central)
[the second repeat](#repeat-1) [another file's heading](sub/other.md#other-heading)
[a site](https://example.com/x) `[in code](missing.md)`

```
[in a fence](missing.md)
```
'''
BROKEN = '''[no such file](nothere.md)
[no such anchor](#nowhere)
[no such anchor elsewhere](sub/other.md#nowhere)
[outside](../../etc/passwd)
'''


def run(root):
    p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'sub'))
        with open(os.path.join(root, 'sub', 'other.md'), 'w') as f:
            f.write('# Other heading\n')
        with open(os.path.join(root, 'README.md'), 'w') as f:
            f.write(GOOD + BROKEN)
        subprocess.run(['git', 'init', '-q', root], check=True)
        rc, out = run(root)
        broken = [l for l in out.splitlines() if l.startswith('README.md:')]
        want = ['nothere.md): no such file', '#nowhere): no heading',
                'sub/other.md#nowhere): no heading', 'passwd): outside the repository']
        for w in want:
            if not any(w in l for l in broken):
                failures.append('not reported: %s' % w)
        if len(broken) != len(want):
            failures.append('want %d broken links, got %d: %r' % (len(want), len(broken), broken))
        if rc != 1:
            failures.append('exit %d with broken links, want 1' % rc)
        with open(os.path.join(root, 'README.md'), 'w') as f:
            f.write(GOOD)
        rc, out = run(root)
        if rc != 0:
            failures.append('exit %d without broken links, want 0: %s' % (rc, out))
    for f in failures:
        print('FAIL: ' + f)
    print('%d failure(s)' % len(failures) if failures else 'link_check behaves')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
