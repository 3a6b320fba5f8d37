// A profile with a chosen number of distinct stacks, for the HTTP endpoint's scrape latency
// (http_bench.sh): `http_stacks <bits>` walks every path of a binary call tree `bits` deep
// (Left/Right at each level: 2^bits distinct stacks) and allocates and frees four 16 KiB
// objects at each leaf; run with a small TCMALLOC_SAMPLE_PARAMETER (4096) almost every leaf is
// sampled. Prints "ready" and waits for its standard input to close.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

void* volatile g_sink;

__attribute__((noinline)) void Leaf() {
  for (int i = 0; i < 4; ++i) {
    void* p = malloc(16384);
    g_sink = p;
    free(p);
  }
}

void Walk(int depth, unsigned path);

__attribute__((noinline)) void Left(int depth, unsigned path) {
  Walk(depth - 1, path);
  asm volatile("");
}
__attribute__((noinline)) void Right(int depth, unsigned path) {
  Walk(depth - 1, path);
  asm volatile("");
}

__attribute__((noinline)) void Walk(int depth, unsigned path) {
  if (depth == 0) return Leaf();
  if (path & (1u << (depth - 1))) {
    Right(depth, path);
  } else {
    Left(depth, path);
  }
  asm volatile("");
}

}  // namespace

int main(int argc, char** argv) {
  const int bits = argc > 1 ? atoi(argv[1]) : 10;
  for (unsigned path = 0; path < (1u << bits); ++path) Walk(bits, path);
  printf("ready\n");
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  return 0;
}
