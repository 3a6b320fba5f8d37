"""A deterministic, allocation-heavy CPython workload for cpython_bias.py.

Builds a live set of records (dicts of strings, lists and ints) that grows to tens of MB
while short-lived temporaries churn (json round trips, string joins, list appends that
realloc in place, comprehensions), dumps the heap profile once at the top of the growth
(HeapProfilerDump through ctypes, the in-use total compared there), then shrinks the live set
and churns again. Run with PYTHONHASHSEED=0 so that every run allocates the same sequence.
Usage: python3 cpython_workload.py [SCALE]   (SCALE: records per phase, default 60000)
"""
import ctypes
import json
import random
import sys


def make_record(rng, i):
    name = "user-%06d-%s" % (i, "x" * rng.randrange(4, 40))
    tags = [("tag%d" % rng.randrange(1000)) for _ in range(rng.randrange(1, 8))]
    return {
        "id": i,
        "name": name,
        "tags": tags,
        "score": rng.random(),
        "blob": "".join(chr(97 + (i + k) % 26) for k in range(rng.randrange(16, 1500))),
    }


def churn(rng, records, n):
    # Temporaries freed soon after they are made: json round trips, joins, growing lists.
    acc = 0
    for j in range(n):
        rec = records[rng.randrange(len(records))] if records else make_record(rng, j)
        text = json.dumps(rec)
        back = json.loads(text)
        acc += len(back["tags"]) + len(text)
        grow = []
        for k in range(rng.randrange(1, 60)):
            grow.append(k * j)  # list growth: realloc, mostly in place
        s = ""
        for k in range(rng.randrange(1, 20)):
            s += back["name"][: k + 1]  # str concatenation: realloc in place
        acc += len(grow) + len(s)
    return acc


def main():
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
    rng = random.Random(12345)
    libc = ctypes.CDLL(None)
    dump = getattr(libc, "HeapProfilerDump", None)
    live = []
    keep = {}
    # Growth: the live set rises, churn between batches.
    for batch in range(10):
        for i in range(scale // 10):
            r = make_record(rng, batch * scale + i)
            live.append(r)
            if i % 7 == 0:
                keep[r["name"]] = [r["blob"] * 2, bytearray(rng.randrange(64, 4096))]
        churn(rng, live, scale // 40)
    if dump is not None:
        dump(b"top of the growth")
    # Shrink: drop most of the live set, then churn on what is left.
    del live[: len(live) * 3 // 4]
    for k in list(keep)[: len(keep) * 3 // 4]:
        del keep[k]
    churn(rng, live, scale // 10)
    print("done", len(live), len(keep))


if __name__ == "__main__":
    main()
