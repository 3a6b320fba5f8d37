// The peak profile's ground truth (run_peak.py): phase A holds fa() 256 MiB and fb() 64 MiB,
// then frees fa's; phase B allocates fc() 192 MiB; the program exits with fb's and fc's live.
// The true peak is fa 256 MiB + fb 64 MiB at the end of fb(), inside phase A; phase B's
// 256 MiB never reach it. Chunks are 64 KiB (small objects of the allocator), never touched.
// Prints the phase boundaries in CLOCK_MONOTONIC nanoseconds (the peak file's clock).
// With the argument `dump`, a dump (HeapProfilerDump, found with dlsym: the runtime is
// preloaded) ends phase A, so the exit dump's interval is phase B alone.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

namespace {

constexpr size_t kChunk = 64 * 1024;
constexpr int kA = 4096, kB = 1024, kC = 3072;  // 256, 64, 192 MiB
void* a_chunks[kA];
void* b_chunks[kB];
void* c_chunks[kC];

long long Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void fa() {
  for (void*& p : a_chunks) p = malloc(kChunk);
}
__attribute__((noinline)) void fb() {
  for (void*& p : b_chunks) p = malloc(kChunk);
}
__attribute__((noinline)) void fc() {
  for (void*& p : c_chunks) p = malloc(kChunk);
}

}  // namespace

int main(int argc, char**) {
  printf("phase_a_start %lld\n", Now());
  fa();
  fb();
  for (void* p : a_chunks) free(p);
  printf("phase_a_end %lld\n", Now());
  if (argc > 1) {
    auto dump = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "HeapProfilerDump"));
    if (dump == nullptr) return 2;
    dump("end of phase A");
  }
  fc();
  printf("phase_b_end %lld\n", Now());
  fflush(stdout);
  // Keep the compiler from dropping the stores.
  return b_chunks[0] == nullptr || c_chunks[0] == nullptr;
}
