// Workloads of the stress program (see workloads.h). Threads that may receive SIGUSR1 register
// in a table under a mutex, and the signaller only calls pthread_kill while holding it, so it
// never signals a thread that has exited.
#include "workloads.h"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "allocation_calls.h"
#include "pattern.h"
#include "stress_state.h"

namespace heapkit::stress {
namespace {

constexpr int kMaxRegistered = 256;
std::mutex g_registry_mu;
pthread_t g_registry[kMaxRegistered];
bool g_registry_used[kMaxRegistered];
std::atomic<int> g_detached_running{0};

// Registers the calling thread as a signal target for its lifetime.
class Registration {
 public:
  Registration() {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    for (int i = 0; i < kMaxRegistered; ++i)
      if (!g_registry_used[i]) {
        g_registry_used[i] = true;
        g_registry[i] = pthread_self();
        index_ = i;
        return;
      }
  }
  ~Registration() {
    if (index_ < 0) return;
    std::lock_guard<std::mutex> lock(g_registry_mu);
    g_registry_used[index_] = false;
  }

 private:
  int index_ = -1;
};

thread_local int t_in_handler = 0;

// gcc 12's ThreadSanitizer restores a wrong signal mask after a handler that ran inside another
// (LLVM's compiler-rt fixed it in 2025: "[tsan] Fix nested signal handling"), after which
// handlers nest despite sa_mask: under it a nested handler is the sanitizer's, not a failure.
#if defined(__SANITIZE_THREAD__)
constexpr bool kHandlersMayNest = true;
#else
constexpr bool kHandlersMayNest = false;
#endif

// Never allocates: checks that handlers do not nest on one thread and that a canary object,
// which no thread writes, still carries its pattern while the interrupted code may be anywhere
// inside malloc/free.
void OnSignal(int) {
  int saved_errno = errno;
  if (t_in_handler++ != 0 && !kHandlersMayNest) Fail("signal handler re-entered on one thread");
  uint64_t n = g_stats.signals_handled.fetch_add(1, std::memory_order_relaxed);
  const Slot& c = g_canaries[n % kCanaries];
  size_t bad = FirstMismatch(c.p, std::min<size_t>(c.size, 512), c.seed);
  if (bad != SIZE_MAX)
    Fail("canary %p corrupted at offset %zu (seen in a signal handler)", c.p, bad);
  --t_in_handler;
  errno = saved_errno;
}

bool CanRealloc(How h) { return h == How::kMalloc || h == How::kCalloc || h == How::kRealloc; }

// Reallocates s to n bytes, checks the kept prefix, patterns the new tail.
void Resize(Slot* s, size_t n, const char* where) {
  void* q = calls::Realloc(s->p, n);
  if (q == nullptr) Fail("realloc(%p, %zu) returned NULL", s->p, n);
  size_t keep = std::min(n, s->size);
  size_t bad = FirstMismatch(q, keep, s->seed);
  if (bad != SIZE_MAX)
    Fail("corruption in %s: realloc(%p, %zu) -> %p lost content at offset %zu of %zu kept bytes",
         where, s->p, n, q, bad, keep);
  if (n > s->size) FillRange(q, s->size, n, s->seed);
  CountLive(static_cast<int64_t>(n) - static_cast<int64_t>(s->size), 0);
  s->p = q;
  s->size = n;
  s->how = How::kRealloc;
  g_stats.reallocs.fetch_add(1, std::memory_order_relaxed);
}

void PushOrRelease(const Slot& s, Rng& rng, const char* where) {
  for (int tries = 0; tries < 2; ++tries)
    if (g_queues[rng.Below(kQueues)].TryPush(s)) return;
  Release(s, where);
}

// One short-lived thread of the churner.
void ChurnThread(uint64_t seed, bool detached) {
  {
    Registration reg;
    Rng rng(seed);
    std::vector<Slot> mine;
    mine.reserve(64);
    for (int i = 0; i < 64; ++i) mine.push_back(Allocate(rng.Size(), How::kMalloc, 0, seed + i));
    for (size_t i = 0; i < mine.size(); ++i) {
      if (i % 2 == 0)
        Release(mine[i], "churn thread");
      else
        PushOrRelease(mine[i], rng, "churn thread");
    }
  }
  if (detached) g_detached_running.fetch_sub(1);
}

}  // namespace

void InstallSignalHandlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);  // one handler at a time per thread: it checks that
  sigaddset(&sa.sa_mask, SIGUSR1);
  sigaddset(&sa.sa_mask, SIGPROF);
  sigaction(SIGUSR1, &sa, nullptr);
  sigaction(SIGPROF, &sa, nullptr);
}

void MakeCanaries() {
  Rng rng(g_options.seed * 7 + 3);
  for (int i = 0; i < kCanaries; ++i)
    g_canaries[i] = Allocate(1 + rng.Below(4096), How::kMalloc, 0, i);
}

void FreeCanaries() {
  for (Slot& c : g_canaries) Release(c, "canaries");
}

void Producer(int id) {
  Registration reg;
  Rng rng(g_options.seed * 1000 + id);
  std::vector<Slot> local;  // objects this thread frees itself, later
  uint64_t counter = static_cast<uint64_t>(id) << 40;
  while (!g_stop.load(std::memory_order_relaxed)) {
    static constexpr How kinds[] = {How::kMalloc, How::kCalloc, How::kNew, How::kNewArray,
                                    How::kAlignedNew};
    How how = kinds[rng.Below(5)];
    size_t align = how == How::kAlignedNew ? size_t{16} << rng.Below(9) : 0;
    Slot s = Allocate(rng.Size(), how, align, ++counter);
    if (rng.Below(4) == 0) {
      local.push_back(s);
      if (local.size() > 64) {
        size_t k = rng.Below(local.size());
        Release(local[k], "producer (own free)");
        local[k] = local.back();
        local.pop_back();
      }
    } else {
      PushOrRelease(s, rng, "producer (queues full)");
    }
  }
  for (const Slot& s : local) Release(s, "producer (exit)");
}

void Consumer(int id) {
  Registration reg;
  Rng rng(g_options.seed * 2000 + id);
  int q = id % kQueues;
  while (!g_stop.load(std::memory_order_relaxed)) {
    Slot s;
    bool got = false;
    for (int i = 0; i < kQueues && !got; ++i) got = g_queues[(q + i) % kQueues].TryPop(&s);
    q = (q + 1) % kQueues;
    if (!got) {
      SleepMicros(50);
      continue;
    }
    if (CanRealloc(s.how) && rng.Below(8) == 0) {
      Verify(s, "consumer (before realloc)");
      Resize(&s, 1 + rng.Below(2 * s.size + 64), "consumer");
    }
    Release(s, "consumer (cross-thread free)");
    g_stats.cross_thread_frees.fetch_add(1, std::memory_order_relaxed);
  }
}

void Reallocer(int id) {
  Registration reg;
  Rng rng(g_options.seed * 3000 + id);
  constexpr size_t kMax = 128 * 1024;
  std::vector<Slot> slots(64);
  uint64_t counter = static_cast<uint64_t>(id) << 40;
  while (!g_stop.load(std::memory_order_relaxed)) {
    Slot& s = slots[rng.Below(slots.size())];
    if (s.p == nullptr) {
      size_t n = 1 + rng.Below(512);
      s.p = calls::Realloc(nullptr, n);  // realloc(NULL, n) is malloc
      if (s.p == nullptr) Fail("realloc(NULL, %zu) returned NULL", n);
      s.size = n;
      s.how = How::kRealloc;
      s.seed = SeedFor(s.p, ++counter);
      Fill(s.p, n, s.seed);
      CountLive(static_cast<int64_t>(n), 1);
      continue;
    }
    uint64_t op = rng.Below(16);
    size_t n;
    if (op == 0) {
      Release(s, "reallocer");
      s = Slot{};
      continue;
    } else if (op < 8) {
      n = std::min(kMax, s.size * (2 + rng.Below(3)) + rng.Below(64));  // grow
    } else if (op < 13) {
      n = std::max<size_t>(1, s.size / (2 + rng.Below(3)));  // shrink
    } else {
      n = 1 + rng.Below(kMax);  // jump across size classes and tiers
    }
    Resize(&s, n, "reallocer");
  }
  for (const Slot& s : slots)
    if (s.p != nullptr) Release(s, "reallocer (exit)");
}

void Aligner(int id) {
  Registration reg;
  Rng rng(g_options.seed * 4000 + id);
  std::vector<Slot> ring(128);
  uint64_t counter = static_cast<uint64_t>(id) << 40;
  while (!g_stop.load(std::memory_order_relaxed)) {
    size_t align = size_t{8} << rng.Below(14);  // 8 B .. 64 KiB
    size_t size = rng.Below(4) == 0 ? rng.Size() : 1 + rng.Below(align * 2);
    How how = rng.Below(3) == 0 ? How::kAlignedNew : How::kAligned;
    if (how == How::kAlignedNew && align < 16) align = 16;
    Slot s = Allocate(size, how, align, ++counter);
    Slot& old = ring[rng.Below(ring.size())];
    if (old.p != nullptr) {
      if (old.how == How::kAligned && rng.Below(2) == 0)
        PushOrRelease(old, rng, "aligner (queues full)");  // freed by a consumer
      else
        Release(old, "aligner");
    }
    old = s;
    g_stats.aligned.fetch_add(1, std::memory_order_relaxed);
  }
  for (const Slot& s : ring)
    if (s.p != nullptr) Release(s, "aligner (exit)");
}

void Churner(int id) {
  Rng rng(g_options.seed * 5000 + id);
  uint64_t n = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    std::vector<std::thread> joinable;
    for (int i = 0; i < 4; ++i) {
      uint64_t seed = rng.Next() | (++n << 48);
      if (rng.Below(4) == 0) {
        g_detached_running.fetch_add(1);
        std::thread(ChurnThread, seed, true).detach();
      } else {
        joinable.emplace_back(ChurnThread, seed, false);
      }
      g_stats.threads_created.fetch_add(1, std::memory_order_relaxed);
    }
    for (auto& t : joinable) t.join();
  }
  while (g_detached_running.load() != 0) SleepMicros(1000);
}

void Forker(int id) {
  Rng rng(g_options.seed * 6000 + id);
  while (!g_stop.load(std::memory_order_relaxed)) {
    SleepMicros(20000 + static_cast<long>(rng.Below(30000)));
    pid_t pid = fork();
    if (pid < 0) Fail("fork failed: %s", strerror(errno));
    if (pid == 0) {
      // Child: only this thread exists. Canaries must be intact; the allocator must work,
      // from this thread and from a new one.
      for (const Slot& c : g_canaries) Verify(c, "fork child (canary)");
      auto work = [](uint64_t seed) {
        Rng r(seed);
        std::vector<Slot> v;
        for (int i = 0; i < 300; ++i) v.push_back(Allocate(r.Size(), How::kMalloc, 0, seed + i));
        for (int i = 0; i < 100; ++i) Resize(&v[r.Below(v.size())], r.Size(), "fork child");
        for (size_t i = v.size(); i-- > 0;) Release(v[i], "fork child");
      };
      work(rng.Next());
      std::thread t(work, rng.Next());
      t.join();
      _exit(0);
    }
    g_stats.forks.fetch_add(1, std::memory_order_relaxed);
    int status = 0;
    for (int waited_ms = 0;; ++waited_ms) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) Fail("waitpid(%d): %s", pid, strerror(errno));
      if (waited_ms > 20000) {
        kill(pid, SIGKILL);
        Fail("fork child %d did not finish within 20 s (deadlock in the child after fork?)", pid);
      }
      SleepMicros(1000);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      Fail("fork child %d ended with %s %d", pid, WIFEXITED(status) ? "exit status" : "signal",
           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  }
}

void Signaller(int id) {
  Rng rng(g_options.seed * 7000 + id);
  itimerval it{{0, 1000}, {0, 1000}};  // SIGPROF every ms of CPU time, to whichever thread runs
  setitimer(ITIMER_PROF, &it, nullptr);
  while (!g_stop.load(std::memory_order_relaxed)) {
    {
      std::lock_guard<std::mutex> lock(g_registry_mu);
      int start = static_cast<int>(rng.Below(kMaxRegistered));
      for (int i = 0; i < kMaxRegistered; ++i) {
        int k = (start + i) % kMaxRegistered;
        if (g_registry_used[k]) {
          pthread_kill(g_registry[k], SIGUSR1);
          break;
        }
      }
    }
    SleepMicros(100 + static_cast<long>(rng.Below(200)));
  }
  itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);
}

void DrainQueues() {
  for (SlotQueue& q : g_queues) {
    Slot s;
    while (q.TryPop(&s)) Release(s, "final drain");
  }
}

}  // namespace heapkit::stress
