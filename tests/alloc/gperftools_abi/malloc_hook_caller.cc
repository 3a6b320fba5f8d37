// MallocHook as a gperftools user sees it. Built twice and linked with libheapkit.so: against
// gperftools 2.10's own header (Debian's /usr/include/gperftools: the exported names and types
// must match) and against heapkit's (its inline Invoke functions and UnhookedMMap too).
//  - New/Delete hooks see exactly this thread's allocations and frees, pointer and size, in
//    order, from every entry point (malloc family, realloc, new/new[] aligned and nothrow);
//  - a Delete hook runs before the memory is reused (the object still holds its bytes);
//  - removed hooks are no longer called; the eighth Add fails; Set returns the previous hook;
//  - hooks on several threads each see their own allocations;
//  - the mmap hooks are registrable and removable (heapkit calls them only through Invoke);
//  - a child forked while another thread registers hooks can register hooks.
// Run also under HEAPPROFILE and HEAPCHECK (CMakeLists.txt): the observers and the hooks share
// the slow path.
#include <gperftools/malloc_hook.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "check.h"

// Freed pointers are compared with what the hooks saw, never dereferenced.
#pragma GCC diagnostic ignored "-Wuse-after-free"

namespace {

struct Event {
  char kind;  // 'n' new, 'd' delete
  const void* ptr;
  size_t size;
};

// Only the main thread's events while `recording` is set; fixed storage (hooks may not rely on
// the heap they observe).
constexpr int kMaxEvents = 64;
Event events[kMaxEvents];
int num_events = 0;
thread_local bool recording = false;
constexpr unsigned char kFill = 0xab;
bool delete_saw_reused_memory = false;

void Record(char kind, const void* ptr, size_t size) {
  if (!recording) return;
  if (num_events < kMaxEvents) events[num_events] = Event{kind, ptr, size};
  ++num_events;
}
void OnNew(const void* ptr, size_t size) { Record('n', ptr, size); }
void OnDelete(const void* ptr) {
  if (!recording) return;
  // Every object the test frees while recording was filled with kFill up to its first 16 bytes.
  if (ptr != nullptr) {
    const auto* bytes = static_cast<const unsigned char*>(ptr);
    for (int i = 0; i < 16; ++i) delete_saw_reused_memory |= bytes[i] != kFill;
  }
  Record('d', ptr, 0);
}

void* volatile null_object = nullptr;
void* volatile sink;  // keeps the compiler from pairing away new and delete
void* Keep(void* p) {
  if (p != nullptr) std::memset(p, kFill, 16);
  sink = p;
  return p;
}

// Expected events, compared with the recorded ones in order.
std::vector<Event> expected;
void ExpectNew(const void* p, size_t size) { expected.push_back(Event{'n', p, size}); }
void ExpectDelete(const void* p) { expected.push_back(Event{'d', p, 0}); }

void CheckEvents(const char* what) {
  bool same = num_events == static_cast<int>(expected.size());
  for (int i = 0; same && i < num_events; ++i) {
    same = events[i].kind == expected[i].kind && events[i].ptr == expected[i].ptr &&
           events[i].size == expected[i].size;
  }
  if (!same) {
    std::fprintf(stderr, "%s: %d events, %zu expected\n", what, num_events, expected.size());
    for (int i = 0; i < num_events && i < kMaxEvents; ++i)
      std::fprintf(stderr, "  got %c %p %zu\n", events[i].kind, events[i].ptr, events[i].size);
    for (const Event& e : expected)
      std::fprintf(stderr, "  want %c %p %zu\n", e.kind, e.ptr, e.size);
  }
  CHECK(same);
  num_events = 0;
  expected.clear();
}

void EveryEntryPoint() {
  recording = true;
  void* m = Keep(std::malloc(100));
  void* c = Keep(std::calloc(3, 40));
  void* r = Keep(std::realloc(m, 5000));  // moves: a new block, then the old one freed
  void* a = Keep(aligned_alloc(256, 512));
  void* ma = Keep(memalign(64, 72));
  void* pm = nullptr;
  CHECK(posix_memalign(&pm, 128, 300) == 0);
  Keep(pm);
  void* v = Keep(valloc(10));
  void* big = Keep(std::malloc(1 << 20));
  int* one = new int[4];
  Keep(one);
  auto* arr = new double[5];
  Keep(arr);
  void* nt = Keep(operator new(48, std::nothrow));
  void* al = Keep(operator new (200, std::align_val_t{64}));
  std::free(null_object);  // free(NULL): a delete event with NULL
  std::free(c);
  std::free(r);
  std::free(a);
  std::free(ma);
  std::free(pm);
  std::free(v);
  std::free(big);
  delete[] one;
  delete[] arr;
  operator delete(nt, std::nothrow);
  operator delete (al, std::align_val_t{64});
  recording = false;

  ExpectNew(m, 100);
  ExpectNew(c, 120);
  ExpectNew(r, 5000);
  ExpectDelete(m);
  ExpectNew(a, 512);
  ExpectNew(ma, 72);
  ExpectNew(pm, 300);
  ExpectNew(v, 10);
  ExpectNew(big, 1 << 20);
  ExpectNew(one, 4 * sizeof(int));
  ExpectNew(arr, 5 * sizeof(double));
  ExpectNew(nt, 48);
  ExpectNew(al, 200);
  ExpectDelete(nullptr);
  for (const void* p :
       {c, r, a, ma, pm, v, big, static_cast<void*>(one), static_cast<void*>(arr), nt, al})
    ExpectDelete(p);
  CheckEvents("every entry point");
  CHECK(!delete_saw_reused_memory);
}

// Per-thread counts: each thread checks that the hooks saw each of its own allocations.
thread_local int thread_news = 0;
thread_local int thread_deletes = 0;
thread_local bool thread_counting = false;
void CountNew(const void*, size_t size) {
  if (thread_counting && size == 777) ++thread_news;
}
void CountDelete(const void* p) {
  if (thread_counting && p != nullptr) ++thread_deletes;
}

void SeveralThreads() {
  CHECK(MallocHook::AddNewHook(&CountNew));
  CHECK(MallocHook::AddDeleteHook(&CountDelete));
  constexpr int kThreads = 4, kRounds = 2000;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&good] {
      thread_counting = true;
      for (int i = 0; i < kRounds; ++i) std::free(Keep(std::malloc(777)));
      thread_counting = false;
      if (thread_news == kRounds && thread_deletes == kRounds)
        good.fetch_add(1);
      else
        std::fprintf(stderr, "thread: %d news, %d deletes of %d\n", thread_news, thread_deletes,
                     kRounds);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(good.load() == kThreads);
  CHECK(MallocHook::RemoveNewHook(&CountNew));
  CHECK(MallocHook::RemoveDeleteHook(&CountDelete));
}

template <int N>
void NthHook(const void*, size_t) {}

void Capacity() {
  MallocHook::NewHook hooks[] = {&NthHook<0>, &NthHook<1>, &NthHook<2>, &NthHook<3>,
                                 &NthHook<4>, &NthHook<5>, &NthHook<6>, &NthHook<7>};
  for (int i = 0; i < 7; ++i) CHECK(MallocHook::AddNewHook(hooks[i]));
  CHECK(!MallocHook::AddNewHook(hooks[7]));
  for (int i = 0; i < 7; ++i) CHECK(MallocHook::RemoveNewHook(hooks[i]));
  CHECK(!MallocHook::RemoveNewHook(hooks[0]));
  CHECK(!MallocHook::AddNewHook(nullptr));
}

void DeprecatedSet() {
  CHECK(MallocHook::SetNewHook(&OnNew) == nullptr);
  recording = true;
  void* p = Keep(std::malloc(33));
  recording = false;
  ExpectNew(p, 33);
  CheckEvents("SetNewHook");
  CHECK(MallocHook::SetNewHook(&NthHook<0>) == &OnNew);
  CHECK(MallocHook::SetNewHook(nullptr) == &NthHook<0>);
  CHECK(MallocHook::SetDeleteHook(&OnDelete) == nullptr);
  recording = true;
  std::free(p);
  recording = false;
  ExpectDelete(p);
  CheckEvents("SetDeleteHook");
  CHECK(MallocHook::SetDeleteHook(nullptr) == &OnDelete);
}

int mmap_calls = 0;
void OnMmap(const void*, const void*, size_t, int, int, int, off_t) { ++mmap_calls; }
void OnMunmap(const void*, size_t) { ++mmap_calls; }
void OnMremap(const void*, const void*, size_t, size_t, int, const void*) { ++mmap_calls; }
void OnPreMmap(const void*, size_t, int, int, int, off_t) { ++mmap_calls; }
void OnPreSbrk(ptrdiff_t) { ++mmap_calls; }
void OnSbrk(const void*, ptrdiff_t) { ++mmap_calls; }

void MmapHooks() {
  CHECK(MallocHook::AddMmapHook(&OnMmap));
  CHECK(MallocHook::AddMunmapHook(&OnMunmap));
  CHECK(MallocHook::AddMremapHook(&OnMremap));
  CHECK(MallocHook::AddPreMmapHook(&OnPreMmap));
  CHECK(MallocHook::AddPreSbrkHook(&OnPreSbrk));
  CHECK(MallocHook::AddSbrkHook(&OnSbrk));
#ifdef HEAPKIT_GPERFTOOLS_MALLOC_HOOK_H_
  // heapkit's header defines the Invoke functions (gperftools' declares them only).
  int x;
  MallocHook::InvokeMmapHook(&x, nullptr, 4096, PROT_READ, MAP_PRIVATE, -1, 0);
  MallocHook::InvokeMunmapHook(&x, 4096);
  MallocHook::InvokeMremapHook(&x, &x, 1, 2, 0, nullptr);
  MallocHook::InvokePreMmapHook(nullptr, 4096, PROT_READ, MAP_PRIVATE, -1, 0);
  MallocHook::InvokePreSbrkHook(1);
  MallocHook::InvokeSbrkHook(&x, 1);
  CHECK(mmap_calls == 6);
  void* map =
      MallocHook::UnhookedMMap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  CHECK(MallocHook::UnhookedMUnmap(map, 4096) == 0);
  CHECK(mmap_calls == 6);
  mmap_calls = 0;
#endif
  CHECK(MallocHook::RemoveMmapHook(&OnMmap));
  CHECK(MallocHook::RemoveMunmapHook(&OnMunmap));
  CHECK(MallocHook::RemoveMremapHook(&OnMremap));
  CHECK(MallocHook::RemovePreMmapHook(&OnPreMmap));
  CHECK(MallocHook::RemovePreSbrkHook(&OnPreSbrk));
  CHECK(MallocHook::RemoveSbrkHook(&OnSbrk));
  CHECK(!MallocHook::RemoveMmapHook(&OnMmap));
  CHECK(mmap_calls == 0);
}

// fork() while another thread adds and removes hooks: every child can still register one
// (the registry's lock is never inherited taken).
void ForkWhileRegistering() {
  std::atomic<bool> stop{false};
  std::thread churn([&stop] {
    while (!stop.load()) {
      MallocHook::AddNewHook(&NthHook<2>);
      MallocHook::RemoveNewHook(&NthHook<2>);
    }
  });
  int bad_children = 0;
  for (int i = 0; i < 50; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(10);  // a child stuck on the lock dies of SIGALRM
      const bool ok = MallocHook::AddNewHook(&NthHook<3>) && MallocHook::RemoveNewHook(&NthHook<3>);
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      ++bad_children;
  }
  stop.store(true);
  churn.join();
  CHECK(bad_children == 0);
}

}  // namespace

int main(int argc, char**) {
  CHECK(MallocHook::AddNewHook(&OnNew));
  CHECK(MallocHook::AddDeleteHook(&OnDelete));
  EveryEntryPoint();
  CHECK(MallocHook::RemoveNewHook(&OnNew));
  CHECK(MallocHook::RemoveDeleteHook(&OnDelete));
  CHECK(!MallocHook::RemoveNewHook(&OnNew));

  // Removed: no longer called.
  recording = true;
  std::free(Keep(std::malloc(64)));
  delete[] static_cast<char*>(Keep(new char[64]));
  recording = false;
  CheckEvents("after removal");

  SeveralThreads();
  Capacity();
  DeprecatedSet();
  MmapHooks();
  ForkWhileRegistering();
  if (argc > 1) {
    // For the checker run: an object allocated and lost while a hook is installed is still
    // sampled (CMakeLists.txt expects its leak report).
    CHECK(MallocHook::AddNewHook(&NthHook<1>));
    Keep(std::malloc(12345));
    sink = nullptr;
    CHECK(MallocHook::RemoveNewHook(&NthHook<1>));
  }
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
