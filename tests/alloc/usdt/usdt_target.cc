// A program for the otel_memory probe test (run_usdt.py): allocations of known sizes, whose
// addresses and sizes it writes to the log file named by argv[1] ("alloc <ptr> <size>",
// "free <ptr>"), so that what a probe consumer reads can be checked against the truth.
//   400 objects of pseudo-random sizes (16 B .. 192 KiB), the even-numbered ones freed;
//   one 64 MiB object (sampled whatever the period), freed.
// Done() marks the end: the test's debugger stops there and kills the program.
// The log is written with write(2) only: nothing here allocates but the calls it logs.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int g_log = -1;

void Log(const char* what, const void* p, size_t size) {
  char line[96];
  const int n = snprintf(line, sizeof line, "%s %lu %zu\n", what,
                         static_cast<unsigned long>(reinterpret_cast<uintptr_t>(p)), size);
  if (write(g_log, line, static_cast<size_t>(n)) != n) abort();
}

}  // namespace

extern "C" __attribute__((noinline, used)) void Done() { __asm__ volatile(""); }

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_log = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (g_log < 0) return 2;
  static void* objects[400];
  static size_t sizes[400];
  unsigned state = 12345;
  for (int i = 0; i < 400; ++i) {
    state = state * 1103515245u + 12345u;
    sizes[i] = 16 + (state >> 8) % (192 << 10);
    objects[i] = malloc(sizes[i]);
    if (objects[i] == nullptr) return 3;
    memset(objects[i], 1, 8);
    Log("alloc", objects[i], sizes[i]);
  }
  for (int i = 0; i < 400; i += 2) {
    Log("free", objects[i], 0);
    free(objects[i]);
  }
  const size_t big_size = size_t{64} << 20;
  void* big = malloc(big_size);
  if (big == nullptr) return 3;
  memset(big, 1, 8);
  Log("alloc", big, big_size);
  Log("free", big, 0);
  free(big);
  Done();
  return 0;
}
