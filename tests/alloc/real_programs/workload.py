"""A non-trivial, deterministic Python workload: threads, json, re, dicts, big lists, sorting.

Run under glibc and under heapkit; the printed digest must be identical.
"""
import hashlib
import json
import re
import sys
import threading
from collections import Counter, defaultdict


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield x


def make_records(n, seed):
    g = lcg(seed)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    out = []
    for i in range(n):
        r = next(g)
        out.append({
            "id": i,
            "name": words[r % 8] + "-" + str(r % 1000),
            "score": (r >> 20) % 100000 / 7.0,
            "tags": [words[(r >> k) % 8] for k in range(0, 24, 6)],
            "blob": "x" * (r % 300),
        })
    return out


def worker(idx, results):
    recs = make_records(20000, idx + 1)
    text = json.dumps(recs, sort_keys=True)
    back = json.loads(text)
    pattern = re.compile(r'"name": "([a-z]+)-(\d+)"')
    counts = Counter(m.group(1) for m in pattern.finditer(text))
    total = sum(int(m.group(2)) for m in pattern.finditer(text))
    by_tag = defaultdict(list)
    for r in back:
        for t in r["tags"]:
            by_tag[t].append(r["score"])
    summary = {t: round(sum(v) / len(v), 6) for t, v in sorted(by_tag.items())}
    digest = hashlib.sha256(text.encode()).hexdigest()
    results[idx] = (sorted(counts.items()), total, summary, digest)


def main():
    results = {}
    threads = [threading.Thread(target=worker, args=(i, results)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in sorted(results):
        counts, total, summary, digest = results[i]
        print(i, counts, total, digest)
        print("  ", json.dumps(summary, sort_keys=True))

    # Big lists, sorting with keys, dict churn, string building.
    g = lcg(99)
    big = [next(g) % 1000003 for _ in range(600000)]
    big.sort()
    print("sorted", big[0], big[len(big) // 2], big[-1], sum(big[::997]))
    pairs = sorted(((v % 97, -v) for v in big[::3]), key=lambda p: (p[0], p[1]))
    print("pairs", pairs[:3], pairs[-3:])
    d = {}
    for i, v in enumerate(big[::2]):
        d[str(v)] = d.get(str(v), 0) + i
        if i % 5 == 0:
            d.pop(str(big[i // 2]), None)
    print("dict", len(d), sum(d.values()) % 1000000007)
    s = "".join(chr(97 + v % 26) for v in big[:200000])
    words = re.findall(r"[aeiou][^aeiou]{2,5}[aeiou]", s)
    print("words", len(words), Counter(words).most_common(3))
    nested = [[j * i for j in range(50)] for i in range(5000)]
    print("nested", sum(map(sum, nested)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
