#!/usr/bin/env python3
"""Every link in the tree's Markdown files resolves.

A relative link `[text](path)` or `![alt](path)` must name a file or folder of the checkout,
and a `#fragment` (`path#fragment`, or `#fragment` alone for the same file) must be the anchor
of a heading in that Markdown file, as GitHub makes anchors (lower case, punctuation dropped,
spaces to hyphens, `-1`, `-2`, ... for repeats). Links inside code (fenced blocks, `inline`)
are text, not links; http(s) and mailto links are not followed. Prints one line per broken
link, `file:line: [text](target): why`, and exits 1 if there is any.
Usage: link_check.py [repository root]   (default: the root above this script's folder)
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r'!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
FENCE = re.compile(r'^\s*(```|~~~)')


def markdown_files(root):
    out = subprocess.run(['git', '-C', root, 'ls-files', '-co', '--exclude-standard', '*.md'],
                         capture_output=True, text=True, check=True).stdout
    return sorted({f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))})


def prose_lines(path, blank_code=True):
    """(line number, text) of the lines outside fenced code, with inline code blanked unless
    `blank_code` is false."""
    fenced = False
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced and not blank_code:
                yield number, line
            elif not fenced:
                yield number, re.sub(r'(`+)(?:(?!\1).)+\1', lambda m: ' ' * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r'`([^`]*)`', r'\1', heading)
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link in a heading: its text
    text = re.sub(r'<[^>]+>', '', text).strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(path, blank_code=False):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else '%s-%d' % (base, n))
        cache[path] = found
    return cache[path]


def broken_links(root, name):
    path = os.path.join(root, name)
    for number, line in prose_lines(path):
        for m in LINK.finditer(line):
            target = m.group(2)
            if not target or re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                continue
            file_part, _, fragment = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = '%s:%d: [%s](%s)' % (name, number, m.group(1)[:40], target)
            if not os.path.realpath(dest).startswith(os.path.realpath(root) + os.sep):
                yield where + ': outside the repository'
            elif not os.path.exists(dest):
                yield where + ': no such file'
            elif fragment and dest.endswith('.md') and fragment not in anchors(dest):
                yield where + ': no heading with that anchor in ' + os.path.relpath(dest, root)
            elif fragment and not dest.endswith('.md'):
                if not re.fullmatch(r'L\d+(-L\d+)?', fragment):
                    yield where + ': a fragment in a file that is not Markdown'


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
    files = markdown_files(root)
    broken = [b for name in files for b in broken_links(root, name)]
    for line in broken:
        print(line)
    print('%d broken link(s) in %d Markdown files' % (len(broken), len(files)))
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main())
