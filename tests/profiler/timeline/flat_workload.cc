// A flat heap for the timeline's named share (run_timeline_flat.py): kSites equal stacks,
// site_10() .. site_209(), each holding kPerSite objects of kObject bytes, all allocated
// through one allocation wrapper (hk_xmalloc, which every report folds into its callers).
// kObject is not a size-class size (the allocator hands out 1024 bytes), so the requested and
// the usable bytes differ by 2.4 %.
// Allocates everything, holds it for FLAT_HOLD_MS (default 800) milliseconds, during which
// nothing is allocated, prints "plateau <ms> <ms>" (CLOCK_MONOTONIC: the hold), frees
// everything and exits after a quiet 200 ms.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace {

constexpr int kSites = 200;
constexpr int kPerSite = 128;
constexpr size_t kObject = 1000;

void* g_held[kSites][kPerSite];

long long NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

__attribute__((noinline)) void* hk_xmalloc(size_t n) {
  void* p = malloc(n);
  if (p == nullptr) abort();
  memset(p, 0x5a, n);
  return p;
}

// Each site its own function (its own store: no two bodies are alike, so none are merged).
// clang-format off
#define SITE(n)                                                                             \
  __attribute__((noinline)) void site_##n() {                                               \
    for (int i = 0; i < kPerSite; ++i) g_held[n - 10][i] = hk_xmalloc(kObject);             \
  }
#define TEN(d)                                                                              \
  SITE(d##0) SITE(d##1) SITE(d##2) SITE(d##3) SITE(d##4) SITE(d##5) SITE(d##6) SITE(d##7)   \
  SITE(d##8) SITE(d##9)
TEN(1) TEN(2) TEN(3) TEN(4) TEN(5) TEN(6) TEN(7) TEN(8) TEN(9) TEN(10) TEN(11) TEN(12) TEN(13)
TEN(14) TEN(15) TEN(16) TEN(17) TEN(18) TEN(19) TEN(20)
#undef TEN
#undef SITE

#define TEN(d)                                                                              \
  site_##d##0(), site_##d##1(), site_##d##2(), site_##d##3(), site_##d##4(), site_##d##5(), \
  site_##d##6(), site_##d##7(), site_##d##8(), site_##d##9()
void AllocateAll() {
  TEN(1), TEN(2), TEN(3), TEN(4), TEN(5), TEN(6), TEN(7), TEN(8), TEN(9), TEN(10), TEN(11);
  TEN(12), TEN(13), TEN(14), TEN(15), TEN(16), TEN(17), TEN(18), TEN(19), TEN(20);
}
#undef TEN
// clang-format on

}  // namespace

int main() {
  const char* hold = getenv("FLAT_HOLD_MS");
  const long long hold_ms = hold != nullptr ? atoll(hold) : 800;
  AllocateAll();
  const long long from = NowMs();
  while (NowMs() - from < hold_ms) usleep(10 * 1000);
  const long long to = NowMs();
  for (auto& site : g_held)
    for (void* p : site) free(p);
  printf("plateau %lld %lld\n", from, to);
  fflush(stdout);
  usleep(200 * 1000);
  return 0;
}
