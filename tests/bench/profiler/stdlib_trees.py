"""A CPython workload for timeline_share.py: parses every module of the standard library into
an AST and keeps the trees (a compiler front end's heap: many small objects from a few hundred
allocation sites), compiles each, then drops them in halves."""
import ast
import os
import sysconfig

trees = []
root = sysconfig.get_paths()['stdlib']
for folder, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if d not in ('test', 'tests', 'idlelib', 'site-packages'))
    for name in sorted(files):
        if not name.endswith('.py'):
            continue
        try:
            with open(os.path.join(folder, name), 'rb') as f:
                source = f.read()
            tree = ast.parse(source)
            compile(tree, name, 'exec')
            trees.append(tree)
        except (SyntaxError, ValueError, OSError):
            pass
while trees:
    del trees[len(trees) // 2:]
    if len(trees) == 1:
        trees.clear()
