#include "profiler/heap_profiler.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>

#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/live_objects.h"
#include "alloc/observer_hooks.h"
#include "profiler/allocator_frames.h"
#include "profiler/calibration.h"
#include "profiler/growth_stacks.h"
#include "profiler/legacy_writer.h"
#include "profiler/on_demand_library.h"
#include "profiler/runtime_symbols.h"
#include "profiler/sample_weight.h"
#include "profiler/sampled_objects.h"
#include "profiler/stack_capture.h"
#include "profiler/stack_table.h"
#include "profiler/unloaded_modules.h"

namespace heapkit::prof {
namespace {

using internal::SpinLock;
using internal::SpinLockHolder;

constexpr int64_t kDefaultSampleParameter = 512 * 1024;
constexpr int64_t kMiB = 1 << 20;

// ---- configuration (read at start) ----
struct Config {
  int64_t allocation_interval = int64_t{1} << 30;
  int64_t deallocation_interval = 0;
  int64_t inuse_interval = 100 * kMiB;
  int64_t time_interval_sec = 0;
  int stack_depth = kMaxStackDepth;
  int dump_signal = 0;
};
constinit Config g_config;

// ---- recording ----
std::atomic<bool> g_recording{false};
SpinLock g_enable_lock;
// Estimated (un-sampled) byte totals for the HEAPPROFILE triggers. Kept only while profiling
// (so the hot path of exact mode without HEAPPROFILE — the leak checker — skips two shared
// atomic adds per allocation and free); each profiling start re-bases them on the table's
// estimate of what is in use (ResetEstimatesFromTable).
std::atomic<int64_t> g_est_alloc{0};
std::atomic<int64_t> g_est_free{0};

// ---- HEAPPROFILE state, guarded by g_state_lock ----
SpinLock g_state_lock;
std::atomic<bool> g_profiling{false};
std::atomic<bool> g_exiting{false};
char g_base_prefix[PATH_MAX];
char g_prefix[PATH_MAX + 32];
int g_dump_count = 0;
int64_t g_last_dump_alloc = 0;
int64_t g_last_dump_free = 0;
int64_t g_high_water = 0;
std::atomic<int64_t> g_last_dump_time_ns{0};
// Trigger thresholds (relaxed reads on the hot path; written under g_state_lock).
std::atomic<int64_t> g_next_alloc_dump{INT64_MAX};
std::atomic<int64_t> g_next_free_dump{INT64_MAX};
std::atomic<int64_t> g_next_inuse_dump{INT64_MAX};

// HeapLeakChecker::Disabler: this thread's sampled allocations are not recorded.
__thread bool tls_recording_disabled __attribute__((tls_model("initial-exec"))) = false;

// ---- helper thread ----
int g_pipe[2] = {-1, -1};
std::atomic<bool> g_helper_running{false};
std::atomic<bool> g_helper_restart{false};
bool g_atfork_registered = false;

bool Quiet() { return internal::VerboseLevel() < 0; }

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

const char* ErrName(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "unknown error";
}

int64_t EstimateBytes(size_t size, int64_t rate) {
  if (rate <= 1) return static_cast<int64_t>(size);
  return static_cast<int64_t>(SampleBytesEstimate(static_cast<double>(size),
                                                  static_cast<double>(rate)));
}

// ---- dumping ----

void TableSource(void*, RecordVisitor visit, void* visit_ctx) {
  GlobalStackTable().ForEachBucketWithCounts([&](const Bucket& b) {
    const StackTable& t = GlobalStackTable();
    RecordCounts c{t.InUseCount(b), t.InUseBytes(b), t.AllocCount(b), t.AllocBytes(b)};
    void* pcs[kMaxStackDepth];
    visit(visit_ctx, c, pcs, GlobalStackTable().ReadStack(b, pcs, kMaxStackDepth));
  });
}

LegacyProfile TableProfile() {
  LegacyProfile p;
  int64_t rate = alloc::GetSampleParameter();
  p.kind = rate <= 1 ? ProfileKind::kHeapExact : ProfileKind::kHeapSampled;
  p.sample_rate = rate;
  p.source = &TableSource;
  return p;
}

void UpdateThresholdsLocked() {
  const Config& c = g_config;
  g_next_alloc_dump.store(c.allocation_interval > 0 ? g_last_dump_alloc + c.allocation_interval
                                                    : INT64_MAX,
                          std::memory_order_relaxed);
  g_next_free_dump.store(c.deallocation_interval > 0 ? g_last_dump_free + c.deallocation_interval
                                                     : INT64_MAX,
                         std::memory_order_relaxed);
  g_next_inuse_dump.store(c.inuse_interval > 0 ? g_high_water + c.inuse_interval : INT64_MAX,
                          std::memory_order_relaxed);
}

// Caller holds g_state_lock and g_profiling is true.
bool DumpLocked(const char* reason) {
  char file[sizeof(g_prefix) + 16];
  ++g_dump_count;
  // FormatTo has no field widths: pad the sequence number to four digits by hand.
  char seq[16];
  internal::FormatTo(seq, sizeof(seq), "%d", g_dump_count);
  const char* zeros = &"0000"[strlen(seq) < 4 ? strlen(seq) : 4];
  internal::FormatTo(file, sizeof(file), "%s.%s%s.heap", g_prefix, zeros, seq);
  if (!Quiet()) internal::LogRaw("Dumping heap profile to %s (%s)", file, reason);
  int err = 0;
  bool ok = WriteLegacyProfileFile(file, TableProfile(), &err);
  if (!ok) {
    const char* refusal = internal::ReplaceRefusal(err);
    internal::Log("failed to write heap profile %s: %s", file, refusal ? refusal : ErrName(err));
  }
  int64_t alloc = g_est_alloc.load(std::memory_order_relaxed);
  int64_t freed = g_est_free.load(std::memory_order_relaxed);
  g_last_dump_alloc = alloc;
  g_last_dump_free = freed;
  if (alloc - freed > g_high_water) g_high_water = alloc - freed;
  g_last_dump_time_ns.store(NowNs(), std::memory_order_relaxed);
  UpdateThresholdsLocked();
  return ok;
}

// Evaluates the allocation/deallocation/in-use triggers; dumps on this thread if one fired.
void MaybeDump() {
  int64_t alloc = g_est_alloc.load(std::memory_order_relaxed);
  int64_t freed = g_est_free.load(std::memory_order_relaxed);
  int64_t inuse = alloc - freed;
  if (alloc < g_next_alloc_dump.load(std::memory_order_relaxed) &&
      freed < g_next_free_dump.load(std::memory_order_relaxed) &&
      inuse <= g_next_inuse_dump.load(std::memory_order_relaxed))
    return;
  if (!g_state_lock.TryLock()) return;  // someone else is dumping or starting/stopping
  if (g_profiling.load(std::memory_order_relaxed) && !g_exiting.load(std::memory_order_relaxed)) {
    const Config& c = g_config;
    char reason[160];
    reason[0] = '\0';
    long long amb = alloc / kMiB, fmb = freed / kMiB, imb = inuse / kMiB;
    if (c.allocation_interval > 0 && alloc >= g_last_dump_alloc + c.allocation_interval) {
      internal::FormatTo(reason, sizeof(reason), "%lld MB allocated cumulatively, %lld MB currently in use", amb, imb);
    } else if (c.deallocation_interval > 0 && freed >= g_last_dump_free + c.deallocation_interval) {
      internal::FormatTo(reason, sizeof(reason), "%lld MB freed cumulatively, %lld MB currently in use", fmb, imb);
    } else if (c.inuse_interval > 0 && inuse > g_high_water + c.inuse_interval) {
      internal::FormatTo(reason, sizeof(reason), "%lld MB currently in use", imb);
    }
    if (reason[0] != '\0') DumpLocked(reason);
  }
  g_state_lock.Unlock();
}

void StartHelperThread();

// Profiling (re)starts: the estimated totals restart from what the table holds now (objects
// recorded before the start may be freed during it), counted as allocated, none freed.
void ResetEstimatesFromTable() {
  const int64_t rate = alloc::GetSampleParameter();
  int64_t inuse = 0;
  GlobalStackTable().ForEachBucketWithCounts([&](const Bucket& b) {
    const int64_t n = GlobalStackTable().InUseCount(b);
    if (n > 0) {
      inuse += n * EstimateBytes(static_cast<size_t>(GlobalStackTable().InUseBytes(b) / n), rate);
    }
  });
  g_est_alloc.store(inuse, std::memory_order_relaxed);
  g_est_free.store(0, std::memory_order_relaxed);
}

// This thread's last recorded raw stack (allocator frames included) and its bucket: the same
// call site again — the common case — skips the allocator-frame scan, the stack hash and the
// shared table. Buckets are never freed, so the pointer stays valid. When the capture's walk
// id (stack_capture.h) is the remembered one, the frames are not even copied or compared;
// otherwise (a new walk that may still give the same frames, or the libunwind fallback, id 0)
// they are compared frame by frame.
struct LastStack {
  static constexpr int kDepth = 24;  // deeper stacks are matched by walk id only
  int depth = -1;                    // frames in pcs (-1: none kept)
  uint64_t key = ~uint64_t{0};       // Key(size key, depth limit) of bucket (none: no match)
  uint64_t walk_id = 0;              // 0 whenever bucket is nullptr
  Bucket* bucket = nullptr;
  void* pcs[kDepth] = {};

  static uint64_t Key(uint32_t size_key, int limit) {
    return (static_cast<uint64_t>(size_key) << 32) | static_cast<uint32_t>(limit);
  }
  // The walk id whose frames need no copy for this key; 0 if none.
  uint64_t KnownWalk(uint64_t k) const { return k == key ? walk_id : 0; }
  Bucket* Find(void* const* p, int n, uint64_t k) const {
    if (n != depth || k != key) return nullptr;
    for (int i = 0; i < n; ++i)
      if (p[i] != pcs[i]) return nullptr;
    return bucket;
  }
  void Remember(void* const* p, int n, uint64_t k, uint64_t id, Bucket* b) {
    if (n <= kDepth) {
      for (int i = 0; i < n; ++i) pcs[i] = p[i];
      depth = n;
    } else {
      depth = -1;
    }
    key = k;
    walk_id = id;
    bucket = b;
  }
};
__thread LastStack tls_last_stack __attribute__((tls_model("initial-exec")));

// Where the allocation entered the allocator (alloc/observer_hooks.h, SampleOrigin).
struct Origin {
  uintptr_t pc, sp, rbp;  // pc 0: none
};

// The record of one sampled allocation, shared by both entry points below: `slot` is the
// object's side slot (exact mode) or nullptr (hash map); the stack is captured from `origin`
// when its pc is set, else from here.
// GCC cannot see that pcs is written by the capture whenever it is read (the walk id differs
// from the remembered one) once Record is inlined into OnExactAlloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline __attribute__((always_inline)) bool Record(void* ptr, size_t requested, int64_t rate,
                                                  std::atomic<uint64_t>* slot,
                                                  const Origin& origin) {
  if (__builtin_expect(tls_calibrating, false)) {
    CalibrationSample();
    return false;
  }
  if (tls_recording_disabled) return false;
  const uint32_t size_key = SizeKey(requested, rate);
  const int limit = g_config.stack_depth;
  LastStack& last = tls_last_stack;
  StackTable& table = GlobalStackTable();
  if (slot != nullptr) __builtin_prefetch(slot, 1);  // for the store below
  const uint64_t last_key = LastStack::Key(size_key, limit);
  const uint64_t known = last.KnownWalk(last_key);
  uint64_t walk = known;
  void* pcs[kMaxCaptureDepth];
  // The allocator frames of either start are stripped below.
  int depth = -1;
  if (origin.pc != 0)
    depth = CaptureStackFrom(origin.pc, origin.sp, origin.rbp, pcs, kMaxCaptureDepth, &walk);
  if (depth < 0) {
    walk = known;
    depth = CaptureStack(pcs, kMaxCaptureDepth, 0, &walk);
  }
  Bucket* b;
  if (walk != 0 && walk == known) {
    b = last.bucket;  // the same frames as last time; pcs was not written
  } else if ((b = last.Find(pcs, depth, last_key)) != nullptr) {
    last.walk_id = walk;
  } else {
    int skip = CountAllocatorFrames(pcs, depth);
    int keep = depth - skip;
    if (keep > limit) keep = limit;
    b = table.FindOrCreateBucket(pcs + skip, keep, size_key);
    if (b == nullptr) return false;
    last.Remember(pcs, depth, last_key, walk, b);
  }
  table.RecordAllocIn(slot, ptr, b, requested);
  if (g_profiling.load(std::memory_order_relaxed)) {
    g_est_alloc.fetch_add(EstimateBytes(requested, rate), std::memory_order_relaxed);
    if (__builtin_expect(g_helper_restart.load(std::memory_order_relaxed), false) &&
        g_helper_restart.exchange(false))
      StartHelperThread();
    MaybeDump();
  }
  return true;
}
#pragma GCC diagnostic pop

// The observer's entry: sampled mode (and exact mode without the recorder below).
bool OnSampledAlloc(void* ptr, size_t requested, size_t /*allocated*/) {
  if (ptr == nullptr) return false;
  const int64_t rate = alloc::GetSampleParameter();
  // Exact mode: the object's side slot (see StackTable::SlotForAlloc).
  std::atomic<uint64_t>* slot =
      rate == 1 && requested <= UINT32_MAX ? GlobalStackTable().SlotForAlloc(ptr) : nullptr;
  const alloc::SampleOrigin& o = alloc::tls_sample_origin;
  return Record(ptr, requested, rate, slot, Origin{o.pc, o.sp, o.rbp});
}

// Exact mode's lean entry (alloc/observer_hooks.h, ExactRecorder): the allocator hands over the
// slot and the origin, the rate is 1.
bool OnExactAlloc(void* ptr, size_t requested, std::atomic<uint64_t>* slot, uintptr_t pc,
                  uintptr_t sp, uintptr_t rbp) {
  return Record(ptr, requested, 1, slot, Origin{pc, sp, rbp});
}

bool OnMaybeSampledFree(void* ptr) {
  size_t size;
  if (!GlobalStackTable().RecordFree(ptr, &size)) return false;
  if (g_profiling.load(std::memory_order_relaxed)) {  // totals: see ResetEstimatesFromTable
    g_est_free.fetch_add(EstimateBytes(size, alloc::GetSampleParameter()),
                         std::memory_order_relaxed);
    MaybeDump();
  }
  return true;
}

// Frees of exact-mode slot records are completed by the allocator (alloc::TakeObjectSlot)
// without OnMaybeSampledFree; while profiling, this hook (set only then) counts their bytes
// for the deallocation and in-use triggers.
void OnSlotFree(const void*, uint64_t value) {
  if (!g_profiling.load(std::memory_order_relaxed)) return;
  g_est_free.fetch_add(EstimateBytes(static_cast<uint32_t>(value), alloc::GetSampleParameter()),
                       std::memory_order_relaxed);
  MaybeDump();
}

constexpr alloc::SampleObserver kObserver = {&OnSampledAlloc, &OnMaybeSampledFree};

// Exact mode keeps small objects' records in the allocator's per-object side slots.
constexpr SlotProvider kSlotProvider = {&alloc::ObjectSlotForAlloc, &alloc::FindObjectSlot,
                                        &alloc::ForEachObjectSlot};

// ---- helper thread: time interval and signal ----

void SignalHandler(int) {
  int saved = errno;
  char c = 'S';
  if (g_pipe[1] >= 0) (void)!write(g_pipe[1], &c, 1);
  errno = saved;
}

void* HelperMain(void*) {
  pthread_setname_np(pthread_self(), "heapkit-prof");
  for (;;) {
    int timeout_ms = -1;
    int64_t interval_ns = g_config.time_interval_sec * 1000000000;
    if (interval_ns > 0) {
      int64_t due = g_last_dump_time_ns.load(std::memory_order_relaxed) + interval_ns;
      int64_t left = due - NowNs();
      timeout_ms = left <= 0 ? 0 : static_cast<int>((left + 999999) / 1000000);
    }
    pollfd pfd{g_pipe[0], POLLIN, 0};
    int r = poll(&pfd, 1, timeout_ms);
    if (g_exiting.load(std::memory_order_relaxed)) continue;
    bool signalled = false;
    if (r > 0 && (pfd.revents & POLLIN)) {
      char buf[64];
      ssize_t n = read(g_pipe[0], buf, sizeof(buf));
      signalled = n > 0;
    }
    SpinLockHolder h(&g_state_lock);
    if (!g_profiling.load(std::memory_order_relaxed) || g_exiting.load()) continue;
    if (signalled) DumpLocked("signal");
    if (interval_ns > 0) {
      int64_t since = NowNs() - g_last_dump_time_ns.load(std::memory_order_relaxed);
      if (since >= interval_ns) {
        char reason[64];
        internal::FormatTo(reason, sizeof(reason), "%lld sec since the last dump",
                           static_cast<long long>(since / 1000000000));
        DumpLocked(reason);
      }
    }
  }
  return nullptr;
}

void StartHelperThread() {
  if (g_config.time_interval_sec <= 0 && g_config.dump_signal <= 0) return;
  if (g_helper_running.exchange(true)) return;
  if (g_pipe[0] < 0 && pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    internal::Log("cannot create the heap-profiler pipe (%s); time and signal dumps are off",
                  ErrName(errno));
    return;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the helper never takes the program's signals
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t tid;
  // pthread_create allocates (thread descriptor bits, TLS) through the public heap on our
  // behalf: keep those allocations out of the profile.
  bool was_disabled = tls_recording_disabled;
  tls_recording_disabled = true;
  int err = pthread_create(&tid, &attr, &HelperMain, nullptr);
  tls_recording_disabled = was_disabled;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) {
    g_helper_running.store(false);
    internal::Log("cannot start the heap-profiler thread (%s); time and signal dumps are off",
                  ErrName(err));
  }
}

void InstallDumpSignal() {
  int sig = g_config.dump_signal;
  if (sig <= 0) return;
  struct sigaction old;
  if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &old) != 0) {
    internal::Log("HEAPPROFILESIGNAL=%d is not a signal that can be caught; signal dumps are off",
                  sig);
    g_config.dump_signal = 0;
    return;
  }
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = &SignalHandler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
    if (!Quiet()) internal::LogRaw("Using signal %d as heap profiling switch", sig);
  } else {
    internal::Log("HEAPPROFILESIGNAL=%d: signal %d already has a handler; not replacing it, "
                  "signal dumps are off", sig, sig);
    g_config.dump_signal = 0;
  }
}

// The triggers advance with the sampled estimates, one sample (~ one period) at a time: an
// interval shorter than a few periods fires late and irregularly (a 10 KB interval at the
// default 512 KiB period wrote 195 dumps instead of ~1,300). Below 8 periods, sample every
// interval/8 bytes for this run instead.
void FitSamplingToIntervals() {
  int64_t smallest = 0;
  for (int64_t v : {g_config.allocation_interval, g_config.deallocation_interval,
                    g_config.inuse_interval}) {
    if (v > 0 && (smallest == 0 || v < smallest)) smallest = v;
  }
  const int64_t period = alloc::GetSampleParameter();
  if (smallest == 0 || period <= 1 || smallest >= 8 * period) return;
  const int64_t lowered = smallest / 8 > 1 ? smallest / 8 : 1;
  alloc::SetSampleParameter(lowered);
  if (internal::Verbose())
    internal::Log("heap profiler: a dump interval of %lld bytes is below 8 sampling periods of "
                  "%lld bytes; sampling every %lld bytes for this run",
                  static_cast<long long>(smallest), static_cast<long long>(period),
                  static_cast<long long>(lowered));
}

void ReadConfig() {
  using internal::EnvInt64;
  Config& c = g_config;
  c.allocation_interval = EnvInt64("HEAP_PROFILE_ALLOCATION_INTERVAL", int64_t{1} << 30, 0,
                                   INT64_MAX / 4, true);
  c.deallocation_interval =
      EnvInt64("HEAP_PROFILE_DEALLOCATION_INTERVAL", 0, 0, INT64_MAX / 4, true);
  c.inuse_interval = EnvInt64("HEAP_PROFILE_INUSE_INTERVAL", 100 * kMiB, 0, INT64_MAX / 4, true);
  c.time_interval_sec = EnvInt64("HEAP_PROFILE_TIME_INTERVAL", 0, 0, 100LL * 365 * 86400);
  c.stack_depth = static_cast<int>(EnvInt64("HEAP_PROFILE_STACK_DEPTH", kMaxStackDepth, 1,
                                            kMaxStackDepth));
  c.dump_signal = static_cast<int>(EnvInt64("HEAPPROFILESIGNAL", 0, 1, 64));
}

// ---- fork ----

void ForkPrepare() {
  g_state_lock.Lock();
  GlobalStackTable().ForkPrepare();
  UnloadedModulesForkPrepare();
}
void ForkParent() {
  UnloadedModulesForkDone();
  GlobalStackTable().ForkParent();
  g_state_lock.Unlock();
}
void ForkChild() {
  UnloadedModulesForkDone();
  GlobalStackTable().ForkChild();
  if (g_profiling.load(std::memory_order_relaxed)) {
    // The child writes <prefix>_<pid>.NNNN.heap, numbered from .0001 again.
    internal::FormatTo(g_prefix, sizeof(g_prefix), "%s_%d", g_base_prefix,
                       static_cast<int>(getpid()));
    g_dump_count = 0;
    g_last_dump_time_ns.store(NowNs(), std::memory_order_relaxed);
  }
  // The helper thread did not survive the fork; the pipe is shared with the parent.
  if (g_helper_running.exchange(false)) {
    close(g_pipe[0]);
    close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
    if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
    g_helper_restart.store(true);  // restarted at the child's next sampled allocation
  }
  g_state_lock.Unlock();
}

void ExitDump() {
  if (!g_profiling.load()) return;
  SpinLockHolder h(&g_state_lock);
  if (!g_profiling.load() || g_exiting.exchange(true)) return;
  int64_t inuse = g_est_alloc.load() - g_est_free.load();
  if (inuse < 0) inuse = 0;
  char reason[64];
  if ((inuse >> 20) > 0) {
    internal::FormatTo(reason, sizeof(reason), "Exiting, %lld MB in use", static_cast<long long>(inuse >> 20));
  } else if ((inuse >> 10) > 0) {
    internal::FormatTo(reason, sizeof(reason), "Exiting, %lld kB in use", static_cast<long long>(inuse >> 10));
  } else {
    internal::FormatTo(reason, sizeof(reason), "Exiting, %lld bytes in use", static_cast<long long>(inuse));
  }
  DumpLocked(reason);
}

// ---- MallocExtension provider ----

void HeapSample(alloc::TextSink sink, void* ctx) {
  if (!g_recording.load()) return;
  CallbackSink out(sink, ctx);
  WriteTableProfile(&out);
}

void HeapGrowthStacks(alloc::TextSink sink, void* ctx) {
  CallbackSink out(sink, ctx);
  WriteGrowthStacks(&out);
}

constexpr alloc::HeapSampleProvider kProvider = {&HeapSample, &HeapGrowthStacks};

}  // namespace

void EnableSampleRecording() {
  if (g_recording.load(std::memory_order_acquire)) return;
  LoadOnDemandLibrary();  // libunwind for stack capture; dlopen, so before any lock
  SpinLockHolder h(&g_enable_lock);
  if (g_recording.load(std::memory_order_relaxed)) return;
  InitStackCapture();
  InitAllocatorFrames();
  if (!GlobalStackTable().Init()) {
    internal::Log("cannot allocate the heap-profile table; heap sampling is off");
    return;
  }
  GlobalStackTable().SetSlotProvider(&kSlotProvider);
  if (!g_atfork_registered) {
    g_atfork_registered = true;
    pthread_atfork(&ForkPrepare, &ForkParent, &ForkChild);
  }
  alloc::SetSampleObserver(&kObserver);
  alloc::SetExactRecorder(&OnExactAlloc);
  if (!RuntimeIsSharedObject()) {
    // Static runtime: .symtab names every runtime function. Without it (stripped binary),
    // .dynsym covers only the exported entry points, so calibration adds the return addresses
    // of the internal paths it can reach.
    int ranges = NumRuntimeSymbolRanges();
    if (ranges > 0 && RuntimeSymbolsFromSymtab()) {
      if (internal::Verbose())
        internal::Log("static runtime: allocator frames from %d symbol ranges of /proc/self/exe",
                      ranges);
    } else {
      int seen = CalibrateAllocatorFrames();
      if (internal::Verbose())
        internal::Log("static runtime: no .symtab, allocator frames from %d .dynsym ranges + "
                      "calibration (%d probes)",
                      ranges, seen);
    }
  }
  g_recording.store(true, std::memory_order_release);
}

bool StartHeapProfiling(const char* prefix) {
  if (prefix == nullptr || prefix[0] == '\0') {
    internal::Log("HeapProfilerStart: empty file-name prefix; heap profiling is off");
    return false;
  }
  if (strlen(prefix) >= sizeof(g_base_prefix)) {
    internal::Log("HEAPPROFILE prefix is too long (%zu bytes); heap profiling is off",
                  strlen(prefix));
    return false;
  }
  // The directory must exist and be writable, or every dump would fail.
  char dir[PATH_MAX];
  const char* slash = strrchr(prefix, '/');
  // So must the longest file name a dump uses: <base>_<pid>.NNNN.heap.tmp.XXXXXXXX.
  const size_t base_len = strlen(slash == nullptr ? prefix : slash + 1);
  constexpr size_t kLongestSuffix = sizeof("_4294967295.0001.heap.tmp.XXXXXXXX") - 1;
  if (base_len + kLongestSuffix > NAME_MAX) {
    internal::Log("HEAPPROFILE=%s: file name too long (dump file names would exceed %d bytes); "
                  "heap profiling is off",
                  prefix, NAME_MAX);
    return false;
  }
  if (slash == nullptr) {
    dir[0] = '.';
    dir[1] = '\0';
  } else if (slash == prefix) {
    dir[0] = '/';
    dir[1] = '\0';
  } else {
    size_t n = static_cast<size_t>(slash - prefix);
    memcpy(dir, prefix, n);
    dir[n] = '\0';
  }
  if (access(dir, W_OK | X_OK) != 0) {
    internal::Log("HEAPPROFILE=%s: cannot write to directory %s (%s); heap profiling is off",
                  prefix, dir, ErrName(errno));
    return false;
  }
  {
    SpinLockHolder h(&g_state_lock);
    if (g_profiling.load()) return true;
    ReadConfig();
    if (!alloc::SampleParameterFromEnvironment() && alloc::GetSampleParameter() <= 0)
      alloc::SetSampleParameter(kDefaultSampleParameter);
    FitSamplingToIntervals();
    memcpy(g_base_prefix, prefix, strlen(prefix) + 1);
    memcpy(g_prefix, prefix, strlen(prefix) + 1);
    // Dump numbering continues across Stop/Start, like gperftools.
    ResetEstimatesFromTable();
    g_last_dump_alloc = g_est_alloc.load();
    g_last_dump_free = g_est_free.load();
    g_high_water = g_last_dump_alloc - g_last_dump_free;
    g_last_dump_time_ns.store(NowNs());
    UpdateThresholdsLocked();
  }
  EnableSampleRecording();
  if (!g_recording.load()) return false;
  InstallDumpSignal();
  if (!Quiet()) internal::LogRaw("Starting tracking the heap");
  if (internal::Verbose())
    internal::Log("heap profiler: prefix %s, sample parameter %lld, stack depth %d", prefix,
                  static_cast<long long>(alloc::GetSampleParameter()), g_config.stack_depth);
  alloc::SetSlotFreeHook(&OnSlotFree);
  g_profiling.store(true);
  static std::atomic<bool> exit_registered{false};
  if (!exit_registered.exchange(true)) atexit(&ExitDump);  // final dump, like gperftools
  StartHelperThread();
  return true;
}

void StopHeapProfiling() {
  SpinLockHolder h(&g_state_lock);
  g_profiling.store(false);
  alloc::SetSlotFreeHook(nullptr);
}

bool HeapProfilingOn() { return g_profiling.load(); }

bool DumpHeapProfileNow(const char* reason) {
  SpinLockHolder h(&g_state_lock);
  if (!g_profiling.load() || g_exiting.load()) return false;
  return DumpLocked(reason != nullptr ? reason : "");
}

bool WriteTableProfile(OutputSink* sink) { return WriteLegacyProfile(sink, TableProfile()); }

void ProfilerStartup() {
  static bool done = false;
  if (done) return;
  done = true;
  alloc::SetStackCaptureHook(&CaptureStack);
  alloc::SetHeapSampleProvider(&kProvider);
  alloc::SetHeapGrowthHook(&OnHeapGrowth);
  // Like gperftools, we mark the variable in place (high bit of its first byte) so that
  // programs exec'd from this one see it and write <prefix>_<pid>.NNNN.heap instead of
  // overwriting our files; forked children get the same naming from ForkChild().
  char* raw = const_cast<char*>(internal::EnvRaw("HEAPPROFILE"));
  if (raw != nullptr && raw[0] != '\0' && strlen(raw) + 16 >= PATH_MAX) {
    // Checked before the copy below, which would otherwise shorten it silently.
    internal::Log("HEAPPROFILE prefix is too long (%zu bytes); heap profiling is off", strlen(raw));
  } else if (raw != nullptr && raw[0] != '\0') {
    char prefix[PATH_MAX];
    if (static_cast<unsigned char>(raw[0]) & 0x80) {
      internal::FormatTo(prefix, sizeof(prefix), "%c%s_%d", static_cast<char>(raw[0] & 0x7f),
                         raw + 1, static_cast<int>(getpid()));
    } else {
      internal::FormatTo(prefix, sizeof(prefix), "%s", raw);
      raw[0] = static_cast<char>(raw[0] | 0x80);
    }
    StartHeapProfiling(prefix);
  }
  if (!g_recording.load() && alloc::GetSampleParameter() > 0) EnableSampleRecording();
}

// ---- sampled_objects.h ----

void SetThreadRecordingDisabled(bool disabled) { tls_recording_disabled = disabled; }

namespace {
AllocationStack StackOf(const Bucket& b) {
  return {b.id.load(std::memory_order_relaxed), b.depth, GlobalStackTable().LeafFrame(b)};
}
}  // namespace

int ReadAllocationStack(const AllocationStack& stack, void** out, int max) {
  const Bucket* b = GlobalStackTable().BucketById(stack.id);
  return b != nullptr ? GlobalStackTable().ReadStack(*b, out, max) : 0;
}

bool DecodeAllocationSlot(uint64_t slot, AllocationStack* stack, size_t* requested_size) {
  Bucket* b;
  size_t size;
  if (!GlobalStackTable().DecodeSlot(slot, &b, &size)) return false;
  if (stack != nullptr) *stack = StackOf(*b);
  if (requested_size != nullptr) *requested_size = size;
  return true;
}

size_t RecordedLiveObjects() { return GlobalStackTable().num_live_objects(); }

bool LookupAllocationStack(const void* object, AllocationStack* stack, size_t* requested_size) {
  Bucket* b;
  size_t size;
  if (!GlobalStackTable().Lookup(object, &b, &size)) return false;
  if (stack != nullptr) *stack = StackOf(*b);
  if (requested_size != nullptr) *requested_size = size;
  return true;
}

}  // namespace heapkit::prof
