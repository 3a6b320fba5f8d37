// A program for the HTTP endpoint tests: known allocation sites, then it waits (allocating
// nothing) until its standard input closes, so that two scrapes in a row see the same heap.
//   KeepSmall:  65536 live objects of 1 KiB       (64 MiB in use)
//   KeepLarge:  16 live objects of 2 MiB          (32 MiB in use)
//   Churn:      262144 objects of 256 bytes, freed (64 MiB allocated, none in use)
// With "busy" as argument, worker threads keep allocating and freeing until stdin closes and
// the main thread counts how long each of its own allocation rounds takes: it prints the
// slowest round in microseconds on exit (the hostile-client test checks that it stays small).
// With "mappings N", it first maps N one-page regions that the kernel cannot merge (alternate
// protections): a process whose /proc/self/maps has thousands of lines.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

std::vector<void*> g_keep;

__attribute__((noinline)) void KeepSmall() {
  for (int i = 0; i < 65536; ++i) {
    void* p = malloc(1024);
    memset(p, 1, 16);
    g_keep.push_back(p);
  }
}

__attribute__((noinline)) void KeepLarge() {
  for (int i = 0; i < 16; ++i) {
    void* p = malloc(2 << 20);
    memset(p, 1, 16);
    g_keep.push_back(p);
  }
}

__attribute__((noinline)) void Churn() {
  for (int i = 0; i < 262144; ++i) {
    void* volatile p = malloc(256);
    free(p);
  }
}

void MapRegions(long count) {
  const long page = sysconf(_SC_PAGESIZE);
  char* area = static_cast<char*>(
      mmap(nullptr, count * 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (area == MAP_FAILED) return;
  for (long i = 0; i < count; ++i) {
    mprotect(area + 2 * i * page, page, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "mappings") == 0) MapRegions(atol(argv[2]));
  g_keep.reserve(1 << 17);
  KeepSmall();
  KeepLarge();
  Churn();
  const bool busy = argc > 1 && strcmp(argv[1], "busy") == 0;
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  if (busy) {
    for (int t = 0; t < 2; ++t) {
      workers.emplace_back([&stop] {
        while (!stop.load()) {
          std::vector<void*> v;
          for (int i = 0; i < 1000; ++i) v.push_back(malloc(64 + i));
          for (void* p : v) free(p);
        }
      });
    }
  }
  printf("ready\n");
  fflush(stdout);
  long slowest_us = 0;
  if (busy) {
    // stdin closes when the test is done; meanwhile time our own allocation rounds.
    std::thread reader([&stop] {
      char c;
      while (read(0, &c, 1) > 0) {
      }
      stop.store(true);
    });
    while (!stop.load()) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<void*> v;
      for (int i = 0; i < 100; ++i) v.push_back(malloc(128));
      for (void* p : v) free(p);
      const long us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      if (us > slowest_us) slowest_us = us;
      usleep(1000);
    }
    reader.join();
    for (auto& w : workers) w.join();
    printf("slowest_round_us %ld\n", slowest_us);
  } else {
    char c;
    while (read(0, &c, 1) > 0) {
    }
  }
  return 0;
}
