#!/usr/bin/env python3
"""Makes a symbolized profile.proto written by `pprof-tool --proto` a stable checked-in input.

  normalize_proto.py <dir with profile_pb2.py> <in.pb.gz> <out.pb.gz>

Source files of the golden programs become `tests/pprof_tool/golden/<file>` (whatever directory
or relative DWARF path the build recorded; pprof-tool runs from the source tree, so --list still
finds them), mapped files keep only their base name and lose their build id (nothing is looked
up: every location carries its own lines), the time stamps are zero, and the gzip stream has no
mtime. Run by run_golden.py when HEAPKIT_UPDATE_GOLDEN=1; needs Python's protobuf module.
"""
import gzip
import os
import re
import sys

sys.path.insert(0, sys.argv[1])
try:
    import profile_pb2  # noqa: E402
except ImportError as e:
    print("normalize_proto.py: cannot import profile_pb2/protobuf: %s" % e)
    sys.exit(77)

GOLDEN_SOURCE = re.compile(r"^.*?(tests/pprof_tool/golden/[^/]+)$")

p = profile_pb2.Profile()
p.ParseFromString(gzip.open(sys.argv[2]).read())
mapped = {m.filename for m in p.mapping}
for i, s in enumerate(p.string_table):
    if i in mapped:
        p.string_table[i] = os.path.basename(s)
    else:
        p.string_table[i] = GOLDEN_SOURCE.sub(r"\1", s)
for m in p.mapping:
    m.build_id = 0
p.time_nanos = 0
p.duration_nanos = 0
with open(sys.argv[3], "wb") as f:
    f.write(gzip.compress(p.SerializeToString(), mtime=0))
