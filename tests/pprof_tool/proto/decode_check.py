#!/usr/bin/python3
"""Structure of profile.proto files, checked with Python's protobuf package (Debian's
python3-protobuf) and code protoc generated from the same schema: a decoder no one here wrote.

  decode_check.py <dir with profile_pb2.py> [--start-line=NAME:LINE]... <file.pb.gz>...
--start-line: every file has a Function named NAME, and its start_line is LINE.
Exit 77 when the protobuf package is missing.
"""
import gzip
import sys

sys.path.insert(0, sys.argv[1])
try:
    import profile_pb2
except ImportError as e:
    print("Python protobuf is not available (%s): install python3-protobuf" % e)
    sys.exit(77)

errors = []
expected_start = {}
files = []
for arg in sys.argv[2:]:
    if arg.startswith("--start-line="):
        name, line = arg[len("--start-line="):].rsplit(":", 1)
        expected_start[name] = int(line)
    else:
        files.append(arg)


def check(cond, msg):
    if not cond:
        errors.append(msg)


for path in files:
    data = open(path, "rb").read()
    p = profile_pb2.Profile()
    p.ParseFromString(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    n = len(p.string_table)
    w = path + ": "
    check(n > 0 and p.string_table[0] == "", w + "string_table[0] is not ''")
    check(len(set(p.string_table)) == n, w + "duplicate strings")
    s = lambda i, what: check(0 <= i < n, w + "%s index %d out of range" % (what, i))
    for t in p.sample_type:
        s(t.type, "sample_type.type"); s(t.unit, "sample_type.unit")
    s(p.default_sample_type, "default_sample_type")
    types = [p.string_table[t.type] for t in p.sample_type]
    check(p.string_table[p.default_sample_type] in types, w + "default_sample_type not a sample type")
    check(p.string_table[p.period_type.type] == "space", w + "period_type is not space/bytes")
    for kind, items in [("mapping", p.mapping), ("location", p.location), ("function", p.function)]:
        ids = [x.id for x in items]
        check(all(i != 0 for i in ids), w + kind + " id 0")
        check(len(set(ids)) == len(ids), w + "duplicate %s ids" % kind)
    mappings = {m.id: m for m in p.mapping}
    functions = {f.id for f in p.function}
    locations = {l.id for l in p.location}
    for m in p.mapping:
        s(m.filename, "mapping.filename"); s(m.build_id, "mapping.build_id")
        check(m.memory_start < m.memory_limit, w + "empty mapping")
    for f in p.function:
        s(f.name, "function.name"); s(f.system_name, "function.system_name")
        s(f.filename, "function.filename")
    start = {}
    for f in p.function:
        start.setdefault(p.string_table[f.name], set()).add(f.start_line)
    for name, line in expected_start.items():
        check(start.get(name) == {line}, w + "function %s: start_line %s, expected %d" %
              (name, sorted(start.get(name, [])) or "missing", line))
    inline = 0
    for l in p.location:
        check(l.mapping_id == 0 or l.mapping_id in mappings, w + "location -> missing mapping")
        if l.mapping_id:
            m = mappings[l.mapping_id]
            check(m.memory_start <= l.address < m.memory_limit, w + "address outside its mapping")
            check(not m.has_functions or len(l.line) > 0, w + "has_functions but no lines")
        for ln in l.line:
            check(ln.function_id in functions, w + "line -> missing function")
        inline += len(l.line) > 1
    for smp in p.sample:
        check(len(smp.value) == len(p.sample_type), w + "value count")
        check(all(i in locations for i in smp.location_id), w + "sample -> missing location")
    print("%s: %d samples, %d locations (%d with inline frames), %d functions, %d mappings, "
          "%d strings, types %s" % (path, len(p.sample), len(p.location), inline, len(p.function),
                                    len(p.mapping), n, types))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
