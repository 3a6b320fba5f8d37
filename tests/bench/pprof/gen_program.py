#!/usr/bin/env python3
"""Generates a large C++ program for the pprof benchmark: <files> translation units with
<per_file> functions each. Leaves (gen::leaf_N) are plain; mid-level functions
(gen::mid_N / gen::Box<N>::run) each inline a helper, so DWARF carries inlined_subroutine
ranges like real C++ code. Usage: gen_program.py <outdir> <files> <per_file>"""
import os
import sys

out, files, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(out, exist_ok=True)
for f in range(files):
    lines = ["#include <cstdlib>", "#include <cstring>", "namespace gen {",
             "template <int N> struct Box { static int run(int x); };"]
    for i in range(per):
        n = f * per + i
        if n % 10 == 0:
            lines.append("__attribute__((noinline)) int leaf_%d(int x) {\n"
                         "  char* p = static_cast<char*>(malloc(64 + x %% 17));\n"
                         "  memset(p, x, 8);\n  int r = p[3] + %d;\n  free(p);\n  return r;\n}" % (n, n))
        else:
            lines.append(
                "static inline __attribute__((always_inline)) int inl_%d(int x) {\n"
                "  int s = 0;\n  for (int k = 0; k < x %% 7; ++k) s += (k * %d) ^ x;\n"
                "  return s;\n}" % (n, n))
            if n % 3 == 0:
                lines.append("template <> __attribute__((noinline)) int Box<%d>::run(int x) {\n"
                             "  return inl_%d(x) + x * %d;\n}" % (n, n, n))
            else:
                lines.append("__attribute__((noinline)) int mid_%d(int x) {\n"
                             "  int a = inl_%d(x);\n  return a + (x >> 1) + %d;\n}" % (n, n, n))
    lines.append("}  // namespace gen")
    with open(os.path.join(out, "gen_%03d.cc" % f), "w") as fh:
        fh.write("\n".join(lines) + "\n")
with open(os.path.join(out, "main.cc"), "w") as fh:
    fh.write("#include <cstdio>\nint main(int argc, char**) { std::printf(\"%d\\n\", argc); return 0; }\n")
