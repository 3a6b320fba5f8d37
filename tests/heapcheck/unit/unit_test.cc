// Unit tests of the checker's building blocks, linked with the static runtime (libheapkit.a):
// suppression patterns, /proc/self/maps parsing, MmapArray, and the thread stopper (signals, and
// ptrace for threads that block the signal).
#include <dlfcn.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "alloc/internal/runtime_mappings.h"
#include "alloc/internal/system_memory.h"
#include "alloc/live_objects.h"
#include "alloc/object_slots.h"
#include "alloc/observer_hooks.h"
#include "alloc/sampling_period.h"
#include "gperftools/malloc_extension.h"
#include "heapcheck/check_gate.h"
#include "heapcheck/live_leak_check.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/proc_maps.h"
#include "heapcheck/report.h"
#include "heapcheck/snapshot_fork.h"
#include "heapcheck/roots.h"
#include "heapcheck/suppressions.h"
#include "heapcheck/task_status.h"
#include "heapcheck/thread_stopper.h"
#include "profiler/sample_recorder.h"

namespace heapkit::check {
namespace {

bool Match(const char* pattern, const std::string& text) {
  return SuppressionPatternMatches(pattern, std::strlen(pattern), text.data(), text.size());
}

TEST(Suppressions, SubstringGlobAndAnchors) {
  EXPECT_TRUE(Match("Leak", "LeakToSuppress"));
  EXPECT_TRUE(Match("ToSupp", "LeakToSuppress"));
  EXPECT_FALSE(Match("Real", "LeakToSuppress"));
  EXPECT_TRUE(Match("Leak*Suppress", "LeakToSuppress"));
  EXPECT_TRUE(Match("L?ak", "LeakToSuppress"));
  EXPECT_TRUE(Match("^Leak", "LeakToSuppress"));
  EXPECT_FALSE(Match("^ToSuppress", "LeakToSuppress"));
  EXPECT_TRUE(Match("Suppress$", "LeakToSuppress"));
  EXPECT_FALSE(Match("Leak$", "LeakToSuppress"));
  EXPECT_TRUE(Match("^LeakToSuppress$", "LeakToSuppress"));
  EXPECT_FALSE(Match("^LeakTo$", "LeakToSuppress"));
  EXPECT_TRUE(Match("libfoo.so", "/usr/lib/libfoo.so.1"));
  EXPECT_TRUE(
      Match("std::vector<*>::push_back", "std::vector<int, std::allocator<int> >::push_back"));
  EXPECT_FALSE(Match("x", ""));
  EXPECT_TRUE(Match("*", ""));
}

// The one maps-line parser (profiler/symbolize/maps_line.h), as the checker's ProcMaps, the
// symbolizer's callers and pprof-tool's profile parser use it.
TEST(ProcMaps, ParsesLines) {
  MapsLine e;
  const char* line =
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0                          [heap]";
  ASSERT_TRUE(ParseMapsLine(line, &e));
  EXPECT_EQ(e.start, 0x7f0000000000u);
  EXPECT_EQ(e.limit, 0x7f0000021000u);
  EXPECT_TRUE(e.readable);
  EXPECT_TRUE(e.writable);
  EXPECT_FALSE(e.executable);
  EXPECT_EQ(e.path, "[heap]");
  EXPECT_EQ(e.perms, "rw-p");
  const char* anon = "1000-2000 ---p 00000000 00:00 0";
  ASSERT_TRUE(ParseMapsLine(anon, &e));
  EXPECT_FALSE(e.readable);
  EXPECT_TRUE(e.path.empty());
  EXPECT_FALSE(ParseMapsLine("zzzz", &e));
}

TEST(ProcMaps, ParsesEveryFieldAndRefusesWhatIsNotAMapsLine) {
  MapsLine e;
  // Tabs between fields, leading blanks, a trailing '\r' and blanks, "0x" prefixes, a path with
  // a space in it.
  ASSERT_TRUE(ParseMapsLine(
      "  0x400000-0x401000\tr-xp\t0x1000 fd:01 42 \t/opt/my app/bin (deleted) \r", &e));
  EXPECT_EQ(e.start, 0x400000u);
  EXPECT_EQ(e.limit, 0x401000u);
  EXPECT_EQ(e.offset, 0x1000u);
  EXPECT_TRUE(e.executable);
  EXPECT_EQ(e.path, "/opt/my app/bin (deleted)");
  // Three-letter permissions (some writers drop the sharing flag).
  ASSERT_TRUE(ParseMapsLine("7f00-7fff r-x 00000000 08:01 7 /lib/x.so", &e));
  EXPECT_TRUE(e.executable);
  EXPECT_FALSE(ParseMapsLine("7fff-7f00 r-xp 00000000 08:01 7 /lib/x.so", &e));  // limit < start
  EXPECT_FALSE(ParseMapsLine("7f00-7fff r-zp 00000000 08:01 7 /lib/x.so", &e));  // perms
  EXPECT_FALSE(ParseMapsLine("7f00-7fff r-xp 00000000 0801 7 /lib/x.so", &e));   // dev
  EXPECT_FALSE(ParseMapsLine("7f00-7fff r-xp 00000000 08:01", &e));              // inode
  EXPECT_FALSE(ParseMapsLine("7f00-7fff r-xp 0000g000 08:01 7 /lib/x.so", &e));  // offset
  EXPECT_FALSE(ParseMapsLine("17f0000000000000-7fff r-xp 0 08:01 7 /x", &e));    // 17 digits
  EXPECT_FALSE(ParseMapsLine("7f00 7fff r-xp 00000000 08:01 7 /lib/x.so", &e));  // no '-'
  EXPECT_FALSE(ParseMapsLine("# heapkit: unloaded modules (dlclose), as they were mapped:", &e));
  EXPECT_FALSE(ParseMapsLine("", &e));
}

TEST(ProcMaps, ReadsOwnMapsAndClampsRegions) {
  ProcMaps maps;
  ASSERT_TRUE(maps.Read());
  int local = 0;
  const MapsLine* stack = maps.Find(reinterpret_cast<uintptr_t>(&local));
  ASSERT_NE(stack, nullptr);
  EXPECT_TRUE(stack->readable && stack->writable);
  EXPECT_EQ(maps.Find(0), nullptr);
  // A region spanning unmapped space is clamped to what is readable.
  MmapArray<Region> out;
  ASSERT_TRUE(maps.AddReadable(stack->start - 4096, stack->limit, &out));
  uintptr_t covered = 0;
  for (const Region& r : out) covered += r.end - r.start;
  EXPECT_GE(covered, stack->limit - stack->start);
  EXPECT_GT(maps.text_size(), 0u);
}

namespace maps_test {

// `count` anonymous mappings of one page each, a page apart, alternately read-only and
// read-write (neighbours never merge): their [start, limit) in address order.
struct Pages {
  char* base = nullptr;
  size_t count = 0;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  explicit Pages(size_t n) : count(n) {
    base = static_cast<char*>(
        mmap(nullptr, 2 * n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (size_t i = 0; i < n; ++i)
      mprotect(base + 2 * i * page, page, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE);
  }
  ~Pages() { munmap(base, 2 * count * page); }
  uintptr_t start(size_t i) const { return reinterpret_cast<uintptr_t>(base + 2 * i * page); }
};

// Every entry starts at or after the end of the one before, and each of `pages` is one entry
// with its exact bounds. Empty if so, else what is wrong.
std::string Check(const ProcMaps& maps, const Pages& pages) {
  for (size_t i = 1; i < maps.size(); ++i)
    if (maps[i].start < maps[i - 1].limit) return "entry " + std::to_string(i) + " out of order";
  for (size_t i = 0; i < pages.count; ++i) {
    const MapsLine* e = maps.Find(pages.start(i));
    if (e == nullptr || e->start != pages.start(i) || e->limit != pages.start(i) + pages.page)
      return "page " + std::to_string(i) + " not found whole";
  }
  return "";
}

}  // namespace maps_test

// More mappings than the first buffer holds (64 KiB of text): the file is read again, whole,
// into a larger buffer.
TEST(ProcMaps, ReadsAMapsFileLargerThanItsFirstBuffer) {
  maps_test::Pages pages(2000);  // about 2000 lines of 70+ bytes
  ProcMaps maps;
  ASSERT_TRUE(maps.Read());
  EXPECT_GT(maps.text_size(), size_t{64} << 10);
  EXPECT_GE(maps.size(), 2000u);
  EXPECT_EQ(maps_test::Check(maps, pages), "");
}

// Another thread maps, splits, merges and unmaps memory all the while: every read still gives
// entries in address order, and a mapping that stayed put throughout is there, whole.
TEST(ProcMaps, ReadsWhileAnotherThreadChangesTheAddressSpace) {
  maps_test::Pages pages(1200);
  std::atomic<bool> stop{false};
  std::thread changer([&] {
    const size_t page = pages.page;
    while (!stop.load(std::memory_order_relaxed)) {
      char* p = static_cast<char*>(
          mmap(nullptr, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      for (size_t i = 0; i < 64; i += 2) mprotect(p + i * page, page, PROT_READ);
      for (size_t i = 0; i < 64; i += 2) mprotect(p + i * page, page, PROT_READ | PROT_WRITE);
      munmap(p, 64 * page);
    }
  });
  ProcMaps maps;
  std::string wrong;
  for (int read = 0; read < 300 && wrong.empty(); ++read) {
    if (!maps.Read()) wrong = "read failed";
    if (wrong.empty()) wrong = maps_test::Check(maps, pages);
  }
  stop = true;
  changer.join();
  EXPECT_EQ(wrong, "");
}

// A thread whose stack pointer and thread pointer no mapping holds is said so (its stack is
// not scanned): the caller names it in the report.
TEST(Roots, AThreadWithoutAMappedStackIsToldApart) {
  InitThreadLayout();
  ProcMaps maps;
  ASSERT_TRUE(maps.Read());
  MmapArray<Region> regions;
  MmapArray<uintptr_t> stack_blocks;
  int local = 0;
  const auto sp = reinterpret_cast<uintptr_t>(&local);
  EXPECT_EQ(AddThreadRegions(maps, sp, CurrentThreadPointer(), false, gettid() == getpid(),
                             &regions, &stack_blocks),
            ThreadRegions::kAdded);
  EXPECT_FALSE(regions.empty());
  // An address in no mapping: a range unmapped after the maps were read.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* gone = mmap(nullptr, 16 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  munmap(gone, 16 * page);
  ASSERT_TRUE(maps.Read());
  const auto nowhere = reinterpret_cast<uintptr_t>(gone) + 8 * page;
  ASSERT_EQ(maps.Find(nowhere), nullptr);
  regions.Clear();
  EXPECT_EQ(AddThreadRegions(maps, nowhere, nowhere, true, false, &regions, &stack_blocks),
            ThreadRegions::kStackNotMapped);
  EXPECT_TRUE(regions.empty());
}

// Global roots: every writable segment of every loaded object, except those of the shared
// object that holds the runtime (its globals are bookkeeping). The main program's are always
// kept: linked statically, the runtime shares them with the program.
namespace roots_test {
int g_program_word = 1;  // in the main program's writable segment
bool Covers(const heapkit::check::LoadedModules& m, const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (const heapkit::check::Region& r : m.writable)
    if (a >= r.start && a < r.end) return true;
  return false;
}
}  // namespace roots_test

TEST(Roots, RuntimeSharedObjectGlobalsAreNotRoots) {
  using roots_test::Covers;
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  auto* libc_code = dlsym(libc, "printf");
  auto* libc_data = static_cast<const void*>(dlsym(libc, "environ"));  // a libc global
  ASSERT_NE(libc_code, nullptr);
  ASSERT_NE(libc_data, nullptr);
  heapkit::check::LoadedModules with_libc_as_runtime, with_program_as_runtime;
  ASSERT_TRUE(heapkit::check::CollectModules(&with_libc_as_runtime,
                                             reinterpret_cast<uintptr_t>(libc_code)));
  const auto main_code = reinterpret_cast<uintptr_t>(&roots_test::Covers);
  ASSERT_TRUE(heapkit::check::CollectModules(&with_program_as_runtime, main_code));
  // The shared object holding the given code loses its writable segments, nothing else does.
  EXPECT_FALSE(Covers(with_libc_as_runtime, libc_data));
  EXPECT_TRUE(Covers(with_libc_as_runtime, &roots_test::g_program_word));
  // The main program is never left out, even when it holds the runtime.
  EXPECT_TRUE(Covers(with_program_as_runtime, &roots_test::g_program_word));
  EXPECT_TRUE(Covers(with_program_as_runtime, libc_data));
  dlclose(libc);
}

TEST(MmapArray, GrowsAndKeepsContents) {
  MmapArray<uint64_t> a;
  for (uint64_t i = 0; i < 100000; ++i) ASSERT_TRUE(a.PushBack(i * 3));
  ASSERT_EQ(a.size(), 100000u);
  for (uint64_t i = 0; i < 100000; ++i) ASSERT_EQ(a[i], i * 3);
  a.Clear();
  EXPECT_TRUE(a.empty());
}

// How many bytes of [start, end) the runtime's noted mappings cover (pieces may be split).
size_t NotedBytes(uintptr_t start, uintptr_t end) {
  std::vector<heapkit::internal::RuntimeMapping> all(heapkit::internal::RuntimeMappingCount() + 64);
  const size_t n = heapkit::internal::CopyRuntimeMappings(all.data(), all.size());
  EXPECT_LE(n, all.size());
  size_t covered = 0;
  for (size_t i = 0; i < n && i < all.size(); ++i) {
    const uintptr_t s = std::max(all[i].start, start), e = std::min(all[i].end, end);
    if (s < e) covered += e - s;
  }
  return covered;
}

// The runtime's mappings are noted from SystemAlloc to SystemFree; a hole punched into one
// leaves both sides noted; a resize notes the new place and forgets the old.
TEST(RuntimeMappings, NotedFromAllocUntilFree) {
  using namespace heapkit::internal;
  constexpr size_t kBytes = 64 << 12;
  auto* p = static_cast<char*>(SystemAlloc(kBytes, 0));
  ASSERT_NE(p, nullptr);
  const auto start = reinterpret_cast<uintptr_t>(p);
  EXPECT_EQ(NotedBytes(start, start + kBytes), kBytes);
  SystemFree(p + 8 * 4096, 4 * 4096);  // a hole in the middle
  EXPECT_EQ(NotedBytes(start, start + kBytes), kBytes - 4 * 4096);
  EXPECT_EQ(NotedBytes(start + 8 * 4096, start + 12 * 4096), 0u);
  EXPECT_EQ(NotedBytes(start + 12 * 4096, start + kBytes), kBytes - 12 * 4096);
  p[0] = 42;
  SystemFree(p + 12 * 4096, kBytes - 12 * 4096);
  auto* moved = static_cast<char*>(SystemResize(p, 8 * 4096, 512 * 4096));
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved[0], 42);
  const auto moved_start = reinterpret_cast<uintptr_t>(moved);
  EXPECT_EQ(NotedBytes(moved_start, moved_start + 512 * 4096), 512u * 4096);
  if (moved != p) {
    EXPECT_EQ(NotedBytes(start, start + 8 * 4096), 0u);
  }
  SystemFree(moved, 512 * 4096);
  EXPECT_EQ(NotedBytes(moved_start, moved_start + 512 * 4096), 0u);
}

// The checker's own arrays are the runtime's: never scanned as the program's anonymous memory.
TEST(RuntimeMappings, CheckerArraysAreNoted) {
  MmapArray<uint64_t> a;
  for (uint64_t i = 0; i < 200000; ++i) ASSERT_TRUE(a.PushBack(i));  // grown by SystemResize
  const auto start = reinterpret_cast<uintptr_t>(a.data());
  const uintptr_t end = (start + a.size() * sizeof(uint64_t) + 4095) & ~uintptr_t{4095};
  EXPECT_EQ(NotedBytes(start, end), end - start);
}

// Many threads noting and forgetting at once (the table is lock-free): every range is noted
// while it lives and gone after.
TEST(RuntimeMappings, ConcurrentNotesAndForgets) {
  using heapkit::internal::SystemAlloc;
  using heapkit::internal::SystemFree;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        const size_t bytes = size_t(1 + i % 7) << 12;
        void* p = SystemAlloc(bytes, 0);
        if (p == nullptr) continue;
        const auto s = reinterpret_cast<uintptr_t>(p);
        if (NotedBytes(s, s + bytes) != bytes) wrong.fetch_add(1);
        SystemFree(p, bytes);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(heapkit::internal::RuntimeMappingsNotNoted(), 0u);
}

std::atomic<int> g_started{0};
std::atomic<bool> g_stop{false};
std::atomic<long> g_progress{0};

void* Spinner(void*) {
  g_started.fetch_add(1);
  while (!g_stop.load()) g_progress.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void* Sleeper(void*) {
  g_started.fetch_add(1);
  while (!g_stop.load()) usleep(1000);
  return nullptr;
}

// The allocator's per-object side slots (alloc/object_slots.h), which hold the profiler's
// exact-mode records: one distinct slot per small object, found again by address, enumerated,
// and handed out with the live-object walk; large objects have none.
TEST(ObjectSlots, OneSlotPerSmallObjectFoundAndEnumerated) {
  constexpr int kN = 3000;  // several spans
  std::vector<void*> objects;
  for (int i = 0; i < kN; ++i) objects.push_back(malloc(48 + (i % 3) * 100));
  std::vector<std::atomic<uint64_t>*> slots;
  for (int i = 0; i < kN; ++i) {
    std::atomic<uint64_t>* slot = alloc::ObjectSlotForAlloc(objects[i], nullptr, nullptr);
    ASSERT_NE(slot, nullptr) << i;
    EXPECT_EQ(slot->load(), 0u);
    slot->store(0xabc00000000ull + static_cast<uint64_t>(i));
    slots.push_back(slot);
  }
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(alloc::FindObjectSlot(objects[i]), slots[i]) << i;
    ASSERT_EQ(alloc::ObjectSlotForAlloc(objects[i], nullptr, nullptr), slots[i]) << i;
  }
  struct Seen {
    std::vector<void*>* objects;
    int found = 0;
    int wrong = 0;
    void Count(const void* object, uint64_t value) {
      if ((value >> 32) != 0xabc) return;  // not one of ours
      const uint64_t i = value & 0xffffffffu;
      if (i < objects->size() && (*objects)[i] == object)
        ++found;
      else
        ++wrong;
    }
  } seen{&objects};
  alloc::ForEachObjectSlot([](void* ctx, const void* object,
                              uint64_t value) { static_cast<Seen*>(ctx)->Count(object, value); },
                           &seen);
  EXPECT_EQ(seen.found, kN);
  EXPECT_EQ(seen.wrong, 0);
  Seen live{&objects};
  alloc::ForEachLiveObjectWithSlot(
      [](void* ctx, void* object, size_t, uint64_t value) {
        static_cast<Seen*>(ctx)->Count(object, value);
      },
      &live);
  EXPECT_EQ(live.found, kN);
  EXPECT_EQ(live.wrong, 0);
  void* big = malloc(1 << 20);
  EXPECT_EQ(alloc::ObjectSlotForAlloc(big, nullptr, nullptr), nullptr);
  EXPECT_EQ(alloc::FindObjectSlot(big), nullptr);
  free(big);
  int local = 0;
  EXPECT_EQ(alloc::FindObjectSlot(&local), nullptr);
  for (int i = 0; i < kN; ++i) {
    slots[i]->store(0);
    free(objects[i]);
  }
}

TEST(ThreadStopper, StopsSpinningAndSleepingThreadsAndResumesThem) {
  g_started = 0;
  g_stop = false;
  std::vector<pthread_t> threads(6);
  for (size_t i = 0; i < threads.size(); ++i)
    pthread_create(&threads[i], nullptr, i % 2 ? Spinner : Sleeper, nullptr);
  while (g_started.load() < 6) usleep(100);
  ThreadStopper stopper;
  ASSERT_TRUE(stopper.StopAll(2000));
  EXPECT_GE(stopper.stopped_count(), 6u);
  long before = g_progress.load();
  usleep(20000);
  EXPECT_EQ(g_progress.load(), before) << "a spinner kept running while stopped";
  ProcMaps maps;
  ASSERT_TRUE(maps.Read());
  for (size_t i = 0; i < stopper.slot_count(); ++i) {
    const StoppedThread* t = stopper.thread(i);
    if (t == nullptr) continue;
    const MapsLine* m = maps.Find(t->sp);
    ASSERT_NE(m, nullptr) << "saved SP is not mapped";
    EXPECT_TRUE(m->writable);
    EXPECT_GT(t->register_count, 16);
    EXPECT_NE(t->thread_pointer, 0u);
  }
  stopper.ResumeAll();
  usleep(20000);
  EXPECT_GT(g_progress.load(), before) << "spinners did not resume";
  // A second stop/resume cycle reuses the slots.
  ASSERT_TRUE(stopper.StopAll(2000));
  EXPECT_GE(stopper.stopped_count(), 6u);
  stopper.ResumeAll();
  g_stop = true;
  for (pthread_t t : threads) pthread_join(t, nullptr);
}

TEST(TaskStatus, ReadsBlockedMaskTracerAndState) {
  const char* text =
      "Name:\tworker\nState:\tS (sleeping)\nTgid:\t10\nTracerPid:\t42\nSigPnd:\t0\n"
      "SigBlk:\tfffffffe7ffbfeff\nSigIgn:\t0000000000001000\nCapInh:\t0\n";
  TaskStatus st;
  ASSERT_TRUE(ParseTaskStatus(text, &st));
  EXPECT_EQ(st.blocked, 0xfffffffe7ffbfeffull);
  EXPECT_EQ(st.tracer, 42);
  EXPECT_FALSE(st.exited);
  EXPECT_TRUE(MaskHas(st.blocked, SIGRTMAX - 5));
  EXPECT_FALSE(MaskHas(st.blocked, SIGKILL));  // bit 8 clear in ...feff
  ASSERT_TRUE(ParseTaskStatus("State:\tZ (zombie)\nTracerPid:\t0\nSigBlk:\t0\n", &st));
  EXPECT_TRUE(st.exited);
  EXPECT_FALSE(ParseTaskStatus("Name:\tx\nState:\tR\n", &st));  // no SigBlk: unknown
  // This thread, for real.
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMAX - 5);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  ASSERT_TRUE(ReadTaskStatus(gettid(), &st));
  EXPECT_TRUE(MaskHas(st.blocked, SIGRTMAX - 5));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(ReadTaskStatus(gettid(), &st));
  EXPECT_FALSE(MaskHas(st.blocked, SIGRTMAX - 5));
}

std::atomic<long> g_blocked_progress{0};
std::atomic<pid_t> g_blocked_tid{0};
std::atomic<uintptr_t> g_blocked_self{0};

void* BlockingSpinner(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  g_blocked_self.store(reinterpret_cast<uintptr_t>(pthread_self()));
  g_blocked_tid.store(gettid());
  while (!g_stop.load()) g_blocked_progress.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

pid_t TracerOf(pid_t tid) {
  TaskStatus st;
  return ReadTaskStatus(tid, &st) ? st.tracer : -1;
}

// A thread that blocks every signal is stopped with ptrace (really: it makes no progress), its
// saved state is like a signalled thread's, and after ResumeAll it runs again, traced by no one.
TEST(ThreadStopper, StopsASignalBlockingThreadWithPtraceAndDetaches) {
  g_stop = false;
  g_blocked_tid = 0;
  pthread_t t;
  pthread_create(&t, nullptr, BlockingSpinner, nullptr);
  while (g_blocked_tid.load() == 0 || g_blocked_progress.load() == 0) usleep(100);
  const pid_t tid = g_blocked_tid.load();
  for (int cycle = 0; cycle < 2; ++cycle) {
    ThreadStopper stopper;
    ASSERT_TRUE(stopper.StopAll(2000));
    EXPECT_EQ(stopper.unstopped_count(), 0u);
    EXPECT_EQ(stopper.traced_count(), 1u);
    EXPECT_NE(TracerOf(tid), 0) << "not traced while stopped";
    const long before = g_blocked_progress.load();
    usleep(20000);
    EXPECT_EQ(g_blocked_progress.load(), before) << "the blocking thread kept running";
    const StoppedThread* saved = nullptr;
    for (size_t i = 0; i < stopper.slot_count(); ++i)
      if (stopper.thread(i) != nullptr && stopper.thread(i)->tid == tid) saved = stopper.thread(i);
    ASSERT_NE(saved, nullptr);
    ProcMaps maps;
    ASSERT_TRUE(maps.Read());
    const MapsLine* m = maps.Find(saved->sp);
    ASSERT_NE(m, nullptr) << "saved SP is not mapped";
    EXPECT_TRUE(m->writable);
    EXPECT_GT(saved->register_count, 16);
#if defined(__x86_64__)
    EXPECT_EQ(saved->thread_pointer, g_blocked_self.load());  // glibc: pthread_self() = %fs base
#endif
    stopper.ResumeAll();
    EXPECT_EQ(TracerOf(tid), 0) << "left traced";
    usleep(20000);
    EXPECT_GT(g_blocked_progress.load(), before) << "not resumed";
  }
  g_stop = true;
  pthread_join(t, nullptr);
}

std::atomic<long> g_held_progress{0};
std::atomic<pid_t> g_held_tid{0};

void* HeldSpinner(void*) {
  g_held_tid.store(gettid());
  while (!g_stop.load()) g_held_progress.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

// Holds thread `tid` of the parent in a ptrace stop (a debugger's interrupt) until told to let
// go: one byte on `held_fd` once it is held (or '!' if the kernel refused), then waits for one
// byte on `go_fd` and detaches. System calls only (a raw clone of the test process).
[[noreturn]] void HoldThread(pid_t tid, int held_fd, int go_fd) {
  char c = '!';
  int status;
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0 &&
      ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0 && waitpid(tid, &status, __WALL) == tid)
    c = 'h';
  (void)!write(held_fd, &c, 1);
  (void)!read(go_fd, &c, 1);
  ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  _exit(0);
}

// The pause ends at the release, not when the last thread has run again: a stopped thread that
// cannot run yet (held in its handler by an outside ptrace stop, as a busy scheduler holds it
// for a time slice) is released all the same, and Release returns without waiting for it.
// AwaitResumed waits for it to leave its slot, before any slot can be reused.
TEST(ThreadStopper, ReleaseEndsThePauseWithoutWaitingForAHandlerToLeave) {
  g_stop = false;
  g_held_tid = 0;
  pthread_t t;
  pthread_create(&t, nullptr, HeldSpinner, nullptr);
  while (g_held_tid.load() == 0 || g_held_progress.load() == 0) usleep(100);
  ThreadStopper stopper;
  ASSERT_TRUE(stopper.StopAll(2000));
  EXPECT_EQ(stopper.handlers_not_left(), 0u) << "nothing is released before Release";
  int held[2], go[2];
  ASSERT_EQ(pipe(held), 0);
  ASSERT_EQ(pipe(go), 0);
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // Yama's scope 1 (EINVAL without Yama)
  const long tracer = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (tracer == 0) HoldThread(g_held_tid.load(), held[1], go[0]);
  ASSERT_GT(tracer, 0);
  char c = 0;
  ASSERT_EQ(read(held[0], &c, 1), 1);
  if (c == 'h') {
    stopper.Release();
    EXPECT_EQ(stopper.handlers_not_left(), 1u)
        << "Release must return while the held thread is still in its handler";
    const long before = g_held_progress.load();
    ASSERT_EQ(write(go[1], "g", 1), 1);  // let go: it leaves its handler when scheduled
    stopper.AwaitResumed();
    EXPECT_EQ(stopper.handlers_not_left(), 0u);
    while (g_held_progress.load() == before) usleep(100);  // runs again (a hang guards it)
  } else {
    stopper.ResumeAll();
  }
  int status;
  waitpid(static_cast<pid_t>(tracer), &status, 0);
  prctl(PR_SET_PTRACER, 0, 0, 0, 0);
  for (int fd : {held[0], held[1], go[0], go[1]}) close(fd);
  g_stop = true;
  pthread_join(t, nullptr);
  if (c != 'h') GTEST_SKIP() << "ptrace refused here: cannot hold a thread in its handler";
}

// ---- one check at a time (check_gate.h) ----

std::atomic<int> g_gate_step{0};
std::atomic<bool> g_gate_waiter_held{false};
std::atomic<pid_t> g_gate_waiter_tid{0};

void* GateWaiter(void*) {
  g_gate_waiter_tid.store(gettid());
  g_gate_step.store(1);
  CheckGate gate(GateWait::kUntilFree);
  g_gate_waiter_held.store(gate.held());
  return nullptr;
}

// While one thread holds the gate, another waiting for it is stopped by the holder's stopper
// like any thread (its wait is interrupted by the suspend signal), and gets the gate after.
TEST(CheckGate, AWaiterIsStoppedWhileItWaitsAndGetsTheGateAfter) {
  g_gate_step = 0;
  g_gate_waiter_held = false;
  pthread_t waiter;
  {
    CheckGate gate(GateWait::kUntilFree);
    ASSERT_TRUE(gate.held());
    EXPECT_TRUE(CheckGateHeldHere());
    pthread_create(&waiter, nullptr, GateWaiter, nullptr);
    while (g_gate_step.load() == 0) usleep(100);
    usleep(20000);  // in its futex wait by now
    ThreadStopper stopper;
    ASSERT_TRUE(stopper.StopAll(2000));
    bool stopped = false;
    for (size_t i = 0; i < stopper.slot_count(); ++i) {
      const StoppedThread* t = stopper.thread(i);
      stopped = stopped || (t != nullptr && t->tid == g_gate_waiter_tid.load());
    }
    EXPECT_TRUE(stopped) << "the waiting thread was not stopped";
    EXPECT_EQ(stopper.unstopped_count(), 0u);
    stopper.ResumeAll();
    usleep(10000);
    EXPECT_FALSE(g_gate_waiter_held.load()) << "the waiter went through a held gate";
  }
  EXPECT_FALSE(CheckGateHeldHere());
  pthread_join(waiter, nullptr);
  EXPECT_TRUE(g_gate_waiter_held.load());
}

void* TryBriefly(void* held) {
  CheckGate gate(GateWait::kBriefly);
  *static_cast<bool*>(held) = gate.held();
  return nullptr;
}

// The live check's way: a held gate is "busy" after a few ms, a free one is taken.
TEST(CheckGate, BriefWaitGivesUpWhileHeld) {
  bool held = true;
  pthread_t t;
  {
    CheckGate gate(GateWait::kUntilFree);
    ASSERT_TRUE(gate.held());
    pthread_create(&t, nullptr, TryBriefly, &held);
    pthread_join(t, nullptr);
    EXPECT_FALSE(held);
  }
  pthread_create(&t, nullptr, TryBriefly, &held);
  pthread_join(t, nullptr);
  EXPECT_TRUE(held);
}

TEST(CheckGate, ACheckAskedForInsideACheckIsRefusedNotDeadlocked) {
  CheckGate outer(GateWait::kUntilFree);
  ASSERT_TRUE(outer.held());
  CheckGate inner(GateWait::kUntilFree);
  EXPECT_FALSE(inner.held());
  EXPECT_TRUE(CheckGateHeldHere());  // the outer hold stays
}

// The period of record (alloc/sampling_period.h) outlives a pause: a period set meanwhile (the
// HTTP endpoint starting at its default) is the one in effect once the pause ends, and a dump
// taken during the pause carries the period its samples were taken at, not the pause's 0.
TEST(CheckGate, APausedRecordingKeepsThePeriodOfRecord) {
  const int64_t before = alloc::SamplingPeriod();
  alloc::SetSamplingPeriod(4096);
  prof::EnableSampleRecording();
  std::vector<void*> kept;
  for (int i = 0; i < 256; ++i) kept.push_back(malloc(1000));
  std::string during;
  {
    CheckGate gate(GateWait::kUntilFree);
    ASSERT_TRUE(gate.held());
    gate.PauseRecording();
    EXPECT_EQ(alloc::SamplingPeriodInEffect(), 0);
    MallocExtension::instance()->GetHeapSample(&during);
    alloc::SetSamplingPeriod(8192);
    EXPECT_EQ(alloc::SamplingPeriodInEffect(), 0);  // still paused
  }
  EXPECT_EQ(alloc::SamplingPeriodInEffect(), 8192);
  EXPECT_EQ(alloc::SamplingPeriod(), 8192);
  EXPECT_NE(during.find("@ heap_v2/4096\n"), std::string::npos) << during.substr(0, 200);
  for (void* p : kept) free(p);
  alloc::SetSamplingPeriod(before);
}

std::atomic<int> g_holder_step{0};

void* HoldGateWithRecordingPaused(void*) {
  CheckGate gate(GateWait::kUntilFree);
  gate.PauseRecording();
  g_holder_step.store(1);
  while (g_holder_step.load() != 2) usleep(100);
  return nullptr;
}

// A child forked while another thread held the gate (with recording paused) finds it free and
// the sampling parameter restored; a child forked by the holder keeps the hold.
TEST(CheckGate, ForkedChildFindsAGateAnotherThreadHeldFree) {
  InstallCheckGateForkHandler();
  const int64_t rate = alloc::SamplingPeriod();
  g_holder_step = 0;
  pthread_t holder;
  pthread_create(&holder, nullptr, HoldGateWithRecordingPaused, nullptr);
  while (g_holder_step.load() != 1) usleep(100);
  EXPECT_EQ(alloc::SamplingPeriodInEffect(), 0);
  EXPECT_EQ(alloc::SamplingPeriod(), rate);  // the period of record stays
  pid_t child = fork();
  if (child == 0) {
    const bool restored = alloc::SamplingPeriodInEffect() == rate;
    CheckGate gate(GateWait::kBriefly);
    _exit(gate.held() && restored ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  g_holder_step.store(2);
  pthread_join(holder, nullptr);
  EXPECT_EQ(alloc::SamplingPeriodInEffect(), rate);
  {
    CheckGate gate(GateWait::kUntilFree);
    ASSERT_TRUE(gate.held());
    child = fork();
    if (child == 0) _exit(CheckGateHeldHere() ? 0 : 1);
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
}

// The spacing of live checks: the floor, or 19 times the last check's duration.
TEST(LiveLeakCheck, NextStartKeepsChecksToAShareOfTheTime) {
  constexpr int64_t kMs = 1000000;
  EXPECT_EQ(LiveCheckNextStart(1000 * kMs, 2 * kMs, 1000 * kMs), 2000 * kMs);  // the floor
  EXPECT_EQ(LiveCheckNextStart(1000 * kMs, 2000 * kMs, 1000 * kMs), 39000 * kMs);
  EXPECT_EQ(LiveCheckNextStart(1000 * kMs, 10 * kMs, 0), 1190 * kMs);  // no floor: the share
  // Whatever the durations, checks back to back take at most 1/20 of the time.
  for (int64_t d : {int64_t{1}, 5 * kMs, 600 * kMs, 2100 * kMs}) {
    const int64_t next = LiveCheckNextStart(0, d, 0);
    EXPECT_LE(static_cast<double>(d) / static_cast<double>(d + next), 0.05 + 1e-12);
  }
}

// The copy starts its analysis only when Finish is called, that is once the program's threads
// run again: until then it takes no CPU from the threads being resumed.
bool TellThatTheAnalysisStarted(void* ctx, CheckResult*) {
  const char byte = 's';
  return write(*static_cast<int*>(ctx), &byte, 1) == 1;
}

TEST(ForkedSnapshot, TheCopyAnalysesOnlyOnceFinishIsCalled) {
  int started[2];
  ASSERT_EQ(pipe(started), 0);
  CheckResult result;
  {
    ForkedSnapshot snapshot;
    ASSERT_TRUE(snapshot.Start(&TellThatTheAnalysisStarted, &started[1], &result));
    pollfd p{started[0], POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 500), 0) << "the copy analysed before Finish";
    EXPECT_EQ(snapshot.Finish(60000, &result), ForkedSnapshot::Outcome::kResult);
    EXPECT_EQ(poll(&p, 1, 0), 1);
  }
  close(started[0]);
  close(started[1]);
}

}  // namespace
}  // namespace heapkit::check
