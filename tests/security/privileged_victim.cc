// A program that does everything heapkit's environment variables would act on: it leaks, it
// allocates enough to trigger heap-profile dumps and a large-allocation report. Linked
// statically with libheapkit.a (ld.so ignores LD_PRELOAD for privileged programs), it is run
// by run_privileged.sh once as a plain program and once setgid, where AT_SECURE is set and none
// of those variables may have an effect.
#include <sys/auxv.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__attribute__((noinline)) void* Escape(void* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

int main() {
  std::printf("AT_SECURE=%lu\n", getauxval(AT_SECURE));
  std::fflush(stdout);
  Escape(std::malloc(33));        // lost: the leak checker would report it
  for (int i = 0; i < 64; ++i) {  // 64 MiB allocated in all: allocation-interval dumps
    void* p = Escape(std::malloc(1 << 20));
    std::memset(p, 1, 1 << 20);
    std::free(p);
  }
  void* big = Escape(std::malloc(3 << 20));  // above a 1 MiB large-allocation threshold
  std::free(big);
  return 0;
}
