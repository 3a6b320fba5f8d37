// What a loop-carried read-modify-write through memory costs on this CPU, in core cycles per
// link of the chain. The allocator's fast paths keep three such chains in a malloc+free loop
// (the list's room counter, +1 in malloc and -1 in free; the sampling countdown; the list head
// and the object's link): on a core that forwards a store to the next load of the same address
// only through the store queue, each link costs that latency (~4-7 cycles); on one that renames
// memory (the load takes the stored value as a register), about one cycle. Run it on the machine
// whose allocator figures you read (tests/bench/alloc/RESULTS.md, "What the cycles are").
//
//   memory_chains [iterations=200000000]
//
// Cycles come from a chain of dependent register adds (one cycle each on every x86-64 core)
// timed by the thread's CPU clock, so a shared machine's waits are not in them.
#define _POSIX_C_SOURCE 199309L  // clock_gettime, CLOCK_THREAD_CPUTIME_ID

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double ThreadCpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long cell[16] __attribute__((aligned(64)));
static long* volatile cell_ptr = cell;  // reloaded through memory by the "reloaded base" chain

#if defined(__x86_64__)
// Seconds per iteration of each chain; every chain is one dependent step per iteration.
static double RegisterAdds(long n) {
  long x = 0;
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n / 4; ++i) {
    __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0" : "+r"(x));
  }
  return (ThreadCpuSeconds() - t0) / (double)(n / 4 * 4);
}

static double RmwBaseDisp(long n) {
  long* p = cell_ptr;
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n; ++i) __asm__ volatile("addl $1,8(%0)" : : "r"(p) : "memory");
  return (ThreadCpuSeconds() - t0) / (double)n;
}

static double RmwScaledIndex(long n) {
  long* p = cell_ptr;
  long k = 1;
  __asm__("" : "+r"(k));
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n; ++i) __asm__ volatile("addl $1,(%0,%1,8)" : : "r"(p), "r"(k) : "memory");
  return (ThreadCpuSeconds() - t0) / (double)n;
}

static double RmwReloadedBase(long n) {
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n; ++i) {
    long* p;
    __asm__ volatile("mov %1,%0\n\taddl $1,8(%0)" : "=&r"(p) : "m"(cell_ptr) : "memory");
  }
  return (ThreadCpuSeconds() - t0) / (double)n;
}

// Load, add, store as three instructions, the store and the next load through different
// registers holding the same address (as malloc's pop and free's push address one list head).
static double LoadAddStoreTwoRegisters(long n) {
  long* p = cell_ptr;
  long* q = cell_ptr;
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n; ++i) {
    long v;
    __asm__ volatile("mov 8(%1),%0\n\tadd $1,%0\n\tmov %0,8(%2)"
                     : "=&r"(v)
                     : "r"(p), "r"(q)
                     : "memory");
  }
  return (ThreadCpuSeconds() - t0) / (double)n;
}

// A pointer chase through memory just stored: each step stores the next pointer and loads it
// back at once (the list-head pattern of a pop right after a push).
static double StoreThenLoadPointer(long n) {
  void** slot = (void**)&cell[4];
  void* v = slot;
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n; ++i) {
    __asm__ volatile("mov %0,(%1)\n\tmov (%1),%0" : "+r"(v) : "r"(slot) : "memory");
  }
  return (ThreadCpuSeconds() - t0) / (double)n;
}
#endif

int main(int argc, char** argv) {
#if defined(__x86_64__)
  const long n = argc > 1 ? strtol(argv[1], NULL, 0) : 200000000L;
  if (n < 4) {
    fprintf(stderr, "memory_chains: iterations must be >= 4\n");
    return 2;
  }
  double cycle = 1e30;
  for (int t = 0; t < 3; ++t) {
    const double c = RegisterAdds(n);
    if (c < cycle) cycle = c;
  }
  printf("core clock (dependent adds): %.2f GHz\n", 1e-9 / cycle);
  printf("cycles per link:\n");
  printf("  addl $1, 8(base)                    %.2f\n", RmwBaseDisp(n) / cycle);
  printf("  addl $1, (base,index,8)             %.2f\n", RmwScaledIndex(n) / cycle);
  printf("  base reloaded from memory, addl     %.2f\n", RmwReloadedBase(n) / cycle);
  printf("  load/add/store, two base registers  %.2f\n", LoadAddStoreTwoRegisters(n) / cycle);
  printf("  store a pointer, load it back       %.2f\n", StoreThenLoadPointer(n) / cycle);
  return 0;
#else
  (void)argc;
  (void)argv;
  fprintf(stderr, "memory_chains: x86-64 only\n");
  return 2;
#endif
}
