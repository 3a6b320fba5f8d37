// Threads: many created and destroyed (their caches must come back), frees on other threads
// than the allocating one, and fork() while other threads allocate.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <initializer_list>

#include "probe.h"

namespace heapkit::probe {
namespace {

// Tiny xorshift: no allocation, deterministic per thread.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  size_t Size() {  // mostly small, sometimes large
    uint64_t r = Next();
    if (r % 100 == 0) return 262145 + r % (1 << 20);
    if (r % 10 == 0) return 1 + r % 32768;
    return 1 + r % 512;
  }
};

struct Block {
  void* p;
  size_t n;
  uintptr_t seed;
};

}  // namespace

PROBE_CASE(thread_churn) {
  // Waves of short-lived threads; each leaves half its objects to be freed by main.
  std::mutex mu;
  Block* handed = static_cast<Block*>(malloc(sizeof(Block) * 200000));
  size_t num_handed = 0;
  size_t base_alloc = 0, base_heap = 0;
  const bool have_ext = Ext().get_numeric != nullptr;
  if (have_ext) {
    base_alloc = Property("generic.current_allocated_bytes");
    base_heap = Property("generic.heap_size");
  }
  constexpr int kWaves = 60, kPerWave = 16, kObjects = 200;
  for (int wave = 0; wave < kWaves; ++wave) {
    pthread_t threads[kPerWave];
    struct Arg {
      std::mutex* mu;
      Block* handed;
      size_t* num_handed;
      uint64_t seed;
    } args[kPerWave];
    for (int t = 0; t < kPerWave; ++t) {
      args[t] = Arg{&mu, handed, &num_handed, uint64_t(wave) * 1000 + t + 1};
      auto body = [](void* a) -> void* {
        auto* arg = static_cast<Arg*>(a);
        Rng rng{arg->seed * 0x9e3779b97f4a7c15ull};
        Block local[kObjects];
        for (int i = 0; i < kObjects; ++i) {
          size_t n = rng.Size();
          local[i] = Block{malloc(n), n, arg->seed + i};
          if (local[i].p == nullptr) Fail(__FILE__, __LINE__, "malloc in thread", nullptr);
          FillPattern(local[i].p, n < 256 ? n : 256, local[i].seed);
        }
        for (int i = 0; i < kObjects; i += 2) free(local[i].p);
        std::lock_guard<std::mutex> lock(*arg->mu);
        for (int i = 1; i < kObjects; i += 2) arg->handed[(*arg->num_handed)++] = local[i];
        return nullptr;
      };
      PROBE_CHECK(pthread_create(&threads[t], nullptr, body, &args[t]) == 0);
    }
    for (auto& th : threads) pthread_join(th, nullptr);
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < num_handed; ++i) {
      const Block& b = handed[i];
      const size_t k = b.n < 256 ? b.n : 256;
      PROBE_CHECK_MSG(FindPatternMismatch(b.p, k, b.seed) == k, "block from dead thread changed");
      free(b.p);
    }
    num_handed = 0;
  }
  free(handed);
  if (have_ext) {
    const size_t alloc = Property("generic.current_allocated_bytes");
    const size_t heap = Property("generic.heap_size");
    printf("allocated %zu -> %zu, heap %zu -> %zu\n", base_alloc, alloc, base_heap, heap);
    // Everything was freed: allocated bytes back near the start; the heap did not keep a
    // cache per dead thread (960 threads x even 64 KiB would be 60 MiB).
    PROBE_CHECK_MSG(alloc < base_alloc + (1u << 20), "allocated %zu -> %zu", base_alloc, alloc);
    PROBE_CHECK_MSG(heap < base_heap + (48u << 20), "heap %zu -> %zu", base_heap, heap);
  }
}

PROBE_CASE(cross_thread_free) {
  // Producers allocate and fill; consumers verify and free. Shared bounded queue.
  constexpr int kProducers = 3, kConsumers = 3, kPerProducer = 60000;
  std::mutex mu;
  std::vector<Block> queue;
  queue.reserve(4096);
  std::atomic<int> producers_left{kProducers};
  std::atomic<long> freed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kProducers; ++t) {
    threads.emplace_back([&, t] {
      Rng rng{uint64_t(t + 1) * 0x2545f4914f6cdd1dull};
      for (int i = 0; i < kPerProducer; ++i) {
        size_t n = rng.Size();
        Block b{malloc(n), n, uintptr_t(t) * 1000003u + i};
        if (b.p == nullptr) Fail(__FILE__, __LINE__, "malloc", nullptr);
        FillPattern(b.p, n < 64 ? n : 64, b.seed);
        for (;;) {
          std::lock_guard<std::mutex> lock(mu);
          if (queue.size() < 4000) {
            queue.push_back(b);
            break;
          }
        }
      }
      producers_left.fetch_sub(1);
    });
  }
  for (int t = 0; t < kConsumers; ++t) {
    threads.emplace_back([&] {
      for (;;) {
        Block b{};
        bool got = false, done = false;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!queue.empty()) {
            b = queue.back();
            queue.pop_back();
            got = true;
          } else {
            done = producers_left.load() == 0;
          }
        }
        if (done) return;
        if (!got) {
          std::this_thread::yield();
          continue;
        }
        const size_t k = b.n < 64 ? b.n : 64;
        if (FindPatternMismatch(b.p, k, b.seed) != k)
          Fail(__FILE__, __LINE__, "cross-thread block intact", "size %zu", b.n);
        free(b.p);
        freed.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  PROBE_CHECK_MSG(freed.load() == long(kProducers) * kPerProducer, "freed %ld", freed.load());
}

PROBE_CASE(fork_with_threads) {
  // Workers hammer the allocator while the main thread forks; each child must be able to
  // allocate (from every size range and from a new thread) and exit; no child may hang.
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t) {
    workers.emplace_back([&stop, t] {
      Rng rng{uint64_t(t + 7) * 0x9e3779b97f4a7c15ull};
      void* slots[64] = {};
      while (!stop.load(std::memory_order_relaxed)) {
        int i = int(rng.Next() % 64);
        free(slots[i]);
        slots[i] = malloc(rng.Size());
      }
      for (void* p : slots) free(p);
    });
  }
  constexpr int kForks = 25;
  int hung = 0, failed = 0;
  for (int f = 0; f < kForks; ++f) {
    pid_t pid = fork();
    PROBE_CHECK(pid >= 0);
    if (pid == 0) {
      alarm(10);
      Rng rng{uint64_t(f + 1) * 77};
      void* slots[256];
      for (auto& s : slots) {
        const size_t n = rng.Size();
        s = malloc(n);
        if (s == nullptr) _exit(3);
        memset(s, 1, n < 16 ? n : 16);
      }
      for (auto& s : slots) free(s);
      std::thread t([] {
        for (int i = 0; i < 1000; ++i) free(malloc(size_t(i) * 13 + 1));
      });
      t.join();
      _exit(0);
    }
    int status = 0;
    int waited_ms = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (waited_ms > 10000) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ++hung;
        break;
      }
      usleep(1000);
      ++waited_ms;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
      printf("child %d: %s %d\n", f, WIFEXITED(status) ? "exit" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    }
  }
  stop = true;
  for (auto& w : workers) w.join();
  PROBE_CHECK_MSG(hung == 0 && failed == 0, "%d of %d children hung, %d failed", hung, kForks,
                  failed);
}

PROBE_CASE(mark_thread_idle) {
  const MallocExt& e = RequireExt();
  std::thread t([&] {
    void* keep[1000];
    for (int round = 0; round < 5; ++round) {
      for (auto& k : keep) k = malloc(64);
      for (auto& k : keep) free(k);  // fills this thread's cache
      size_t before = 0, after = 0;
      const bool have = TryProperty("tcmalloc.current_total_thread_cache_bytes", &before);
      e.mark_thread_idle();
      if (have) {
        TryProperty("tcmalloc.current_total_thread_cache_bytes", &after);
        if (after >= before && before > 0)
          Fail(__FILE__, __LINE__, "idle thread gave back its cache", "%zu -> %zu", before, after);
      }
      for (auto& k : keep) k = malloc(64);  // the thread works again after being idle
      for (auto& k : keep) free(k);
      e.mark_thread_busy();
      void* p = malloc(5000);
      memset(p, 2, 5000);
      free(p);
    }
  });
  t.join();
}

}  // namespace heapkit::probe
