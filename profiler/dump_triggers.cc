#include "profiler/dump_triggers.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "alloc/observer_hooks.h"
#include "profiler/heap_profiler.h"
#include "profiler/legacy_writer.h"
#include "profiler/memory_breakdown.h"
#include "profiler/profiler_config.h"
#include "profiler/stack_table.h"

namespace heapkit::prof {

internal::SpinLock g_state_lock;
std::atomic<bool> g_profiling{false};
std::atomic<bool> g_exiting{false};
std::atomic<int64_t> g_est_alloc{0};
std::atomic<int64_t> g_est_free{0};
std::atomic<int64_t> g_next_alloc_dump{INT64_MAX};
std::atomic<int64_t> g_next_free_dump{INT64_MAX};
std::atomic<int64_t> g_next_inuse_dump{INT64_MAX};
std::atomic<int64_t> g_last_dump_time_ns{0};

namespace {

// Guarded by g_state_lock.
char g_base_prefix[PATH_MAX];
char g_prefix[PATH_MAX + 32];
int g_dump_count = 0;
int64_t g_last_dump_alloc = 0;
int64_t g_last_dump_free = 0;
int64_t g_high_water = 0;

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
  const ProfilerConfig& c = g_config;
  g_next_alloc_dump.store(c.allocation_interval > 0 ? g_last_dump_alloc + c.allocation_interval
                                                    : INT64_MAX,
                          std::memory_order_relaxed);
  g_next_free_dump.store(c.deallocation_interval > 0 ? g_last_dump_free + c.deallocation_interval
                                                     : INT64_MAX,
                         std::memory_order_relaxed);
  g_next_inuse_dump.store(c.inuse_interval > 0 ? g_high_water + c.inuse_interval : INT64_MAX,
                          std::memory_order_relaxed);
}

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

}  // namespace

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
  LegacyProfile profile = TableProfile();
  profile.reason = reason;  // the same words as the log line, as a comment after the header
  profile.append_comments = &AppendDumpComments;
  bool ok = WriteLegacyProfileFile(file, profile, &err);
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

void DumpIfTriggered(int64_t alloc, int64_t freed) {
  if (!g_state_lock.TryLock()) return;  // someone else is dumping or starting/stopping
  if (g_profiling.load(std::memory_order_relaxed) && !g_exiting.load(std::memory_order_relaxed)) {
    const ProfilerConfig& c = g_config;
    const int64_t inuse = alloc - freed;
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

void BeginProfilingLocked(const char* prefix) {
  memcpy(g_base_prefix, prefix, strlen(prefix) + 1);
  memcpy(g_prefix, prefix, strlen(prefix) + 1);
  ResetEstimatesFromTable();
  g_last_dump_alloc = g_est_alloc.load();
  g_last_dump_free = g_est_free.load();
  g_high_water = g_last_dump_alloc - g_last_dump_free;
  g_last_dump_time_ns.store(NowNs());
  UpdateThresholdsLocked();
}

void RenameDumpsForChildLocked() {
  internal::FormatTo(g_prefix, sizeof(g_prefix), "%s_%d", g_base_prefix,
                     static_cast<int>(getpid()));
  g_dump_count = 0;
  g_last_dump_time_ns.store(NowNs(), std::memory_order_relaxed);
}

void ExitDump() {
  if (!g_profiling.load()) return;
  internal::SpinLockHolder h(&g_state_lock);
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

bool WriteTableProfile(OutputSink* sink) { return WriteLegacyProfile(sink, TableProfile()); }

}  // namespace heapkit::prof
