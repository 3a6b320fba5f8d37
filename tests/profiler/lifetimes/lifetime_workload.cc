// The lifetimes' ground truth (run_lifetimes.py). Five allocation sites, each its own
// noinline function so that the leaf frame of every stack names it:
//   fa  64 B, freed at once                          (lifetime well under 1 us)
//   fb  4 KiB, kept 50 ms (batches)                   ([10 ms, 100 ms))
//   fc  1 KiB, freed by another thread                (cross-thread)
//   fd  16 KiB, half freed at once, half kept 1.2 s   (bimodal: < 1 ms and [1 s, 10 s))
//   fe  4 KiB + 16 B x 256 (~1 MiB), live at exit     (censored; not fb's size, or the
//                                                     compiler merges the two functions)
// argv[1] = divisor of the object counts (1: the sampled run; larger: the exact-mode run).
// Prints the counts it used: "<fn> <objects> <bytes each>".
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

namespace {

constexpr size_t kA = 64, kB = 4096, kC = 1024, kD = 16384, kE = 4096 + 16;
constexpr int kEObjects = 256;
void* e_objects[kEObjects];

// The empty asm after the call keeps it from becoming a tail jump (the function would then
// not be on the stack).
#define ALLOCATION_SITE(name, size)         \
  __attribute__((noinline)) void* name() {  \
    void* p = malloc(size);                 \
    asm volatile("" : : "r"(p) : "memory"); \
    return p;                               \
  }
ALLOCATION_SITE(fa, kA)
ALLOCATION_SITE(fb, kB)
ALLOCATION_SITE(fc, kC)
ALLOCATION_SITE(fd, kD)
ALLOCATION_SITE(fe, kE)

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
}

// fc's objects go to the freeing thread in batches through one slot.
struct Handoff {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  void** batch = nullptr;
  int n = 0;
  bool done = false;
} handoff;

void* Freer(void*) {
  pthread_mutex_lock(&handoff.mu);
  for (;;) {
    while (handoff.batch == nullptr && !handoff.done) pthread_cond_wait(&handoff.cv, &handoff.mu);
    if (handoff.batch == nullptr) break;  // done
    void** batch = handoff.batch;
    const int n = handoff.n;
    pthread_mutex_unlock(&handoff.mu);
    for (int i = 0; i < n; ++i) free(batch[i]);
    pthread_mutex_lock(&handoff.mu);
    handoff.batch = nullptr;  // the producer may reuse the array now
    pthread_cond_broadcast(&handoff.cv);
  }
  pthread_mutex_unlock(&handoff.mu);
  return nullptr;
}

void Hand(void** batch, int n) {
  pthread_mutex_lock(&handoff.mu);
  while (handoff.batch != nullptr) pthread_cond_wait(&handoff.cv, &handoff.mu);
  handoff.batch = batch;
  handoff.n = n;
  pthread_cond_broadcast(&handoff.cv);
  while (handoff.batch != nullptr) pthread_cond_wait(&handoff.cv, &handoff.mu);  // freed
  pthread_mutex_unlock(&handoff.mu);
}

}  // namespace

int main(int argc, char** argv) {
  const int div = argc > 1 ? atoi(argv[1]) : 1;
  if (div < 1) return 2;
  const int a_n = (1 << 20) / div, b_batches = 16, b_per = 1024 / div, c_n = 65536 / div,
            d_n = 8192 / div;
  static void* slots[65536];

  // fd's long half first, so that their 1.2 s overlap everything else.
  int d_long = 0;
  for (int i = 0; i < d_n; ++i) {
    void* p = fd();
    if (i % 2 == 0) {
      free(p);  // the short half
    } else {
      slots[d_long++] = p;
    }
  }
  const timespec start = [] {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
  }();

  for (int i = 0; i < a_n; ++i) free(fa());

  for (int batch = 0; batch < b_batches; ++batch) {
    static void* b[1024];
    for (int i = 0; i < b_per; ++i) b[i] = fb();
    SleepMs(50);
    for (int i = 0; i < b_per; ++i) free(b[i]);
  }

  pthread_t freer;
  if (pthread_create(&freer, nullptr, Freer, nullptr) != 0) return 3;
  static void* c[4096];
  for (int done = 0; done < c_n;) {
    int n = c_n - done < 4096 ? c_n - done : 4096;
    for (int i = 0; i < n; ++i) c[i] = fc();
    Hand(c, n);
    done += n;
  }
  pthread_mutex_lock(&handoff.mu);
  handoff.done = true;
  pthread_cond_broadcast(&handoff.cv);
  pthread_mutex_unlock(&handoff.mu);
  pthread_join(freer, nullptr);

  for (void*& p : e_objects) p = fe();

  // fd's long half: freed 1.2 s after it was allocated.
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const long elapsed_ms =
      (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
  if (elapsed_ms < 1200) SleepMs(1200 - elapsed_ms);
  for (int i = 0; i < d_long; ++i) free(slots[i]);

  printf("fa %d %zu\nfb %d %zu\nfc %d %zu\nfd %d %zu\nfe %d %zu\n", a_n, kA, b_batches * b_per, kB,
         c_n, kC, d_n, kD, kEObjects, kE);
  return e_objects[0] == nullptr;
}
