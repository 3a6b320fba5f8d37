// The dumps and their triggers (dump_triggers.h).
#include "profiler/output/dump_triggers.h"

#include <stdint.h>
#include <unistd.h>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "alloc/observer_hooks.h"
#include "profiler/format/legacy_writer.h"
#include "profiler/output/memory_breakdown.h"
#include "profiler/output/object_times_dump.h"
#include "profiler/table/object_birth.h"
#include "profiler/output/peak_profile.h"
#include "profiler/time/timeline.h"
#include "profiler/time/peak_tracker.h"
#include "alloc/sampling_period.h"
#include "profiler/profiler_config.h"
#include "profiler/table/sample_estimate.h"
#include "profiler/record/slot_births.h"
#include "profiler/output/proto_profile_file.h"
#include "profiler/output/stack_residency.h"
#include "profiler/table/stack_table.h"

namespace heapkit::prof {
namespace {

// The table's buckets as records; a sampled profile's carry their sampling variance (the
// table's "Sampling variance"), an exact one's none.
void TableSource(void*, RecordVisitor visit, void* visit_ctx) {
  const bool sampled = alloc::SamplingPeriod() > 1;
  GlobalStackTable().ForEachBucketWithCounts([&](const Bucket& b) {
    const StackTable& t = GlobalStackTable();
    const BucketVariance v = t.Variance(b);
    const RecordVariance variance{v.inuse_objects, v.inuse_bytes, v.alloc_objects, v.alloc_bytes};
    RecordCounts c{t.InUseCount(b), t.InUseBytes(b), t.AllocCount(b), t.AllocBytes(b),
                   sampled ? &variance : nullptr};
    void* pcs[kMaxStackDepth];
    visit(visit_ctx, c, pcs, GlobalStackTable().ReadStack(b, pcs, kMaxStackDepth));
  });
}

LegacyProfile TableProfile() {
  LegacyProfile p;
  int64_t rate = alloc::SamplingPeriod();
  p.kind = rate <= 1 ? ProfileKind::kHeapExact : ProfileKind::kHeapSampled;
  p.sample_rate = rate;
  p.source = &TableSource;
  return p;
}

void UpdateThresholdsLocked() HEAPKIT_REQUIRES(g_profiler.lock) {
  const ProfilerConfig& c = g_profiler.config;
  const DumpBaselines b = g_profiler.baselines;
  DumpThresholds& t = g_profiler.thresholds;
  t.next_alloc.store(c.allocation_interval > 0 ? b.alloc + c.allocation_interval : INT64_MAX,
                     std::memory_order_relaxed);
  t.next_free.store(c.deallocation_interval > 0 ? b.freed + c.deallocation_interval : INT64_MAX,
                    std::memory_order_relaxed);
  t.next_inuse.store(c.inuse_interval > 0 ? b.high_water + c.inuse_interval : INT64_MAX,
                     std::memory_order_relaxed);
}

// Profiling (re)starts: the estimated totals restart from what the table holds now (objects
// recorded before the start may be freed during it), counted as allocated, none freed.
void ResetEstimatesFromTable() {
  const int64_t rate = alloc::SamplingPeriod();
  int64_t inuse = 0;
  GlobalStackTable().ForEachBucketWithCounts([&](const Bucket& b) {
    const int64_t n = GlobalStackTable().InUseCount(b);
    if (n > 0) {
      inuse += n * EstimateBytes(static_cast<size_t>(GlobalStackTable().InUseBytes(b) / n), rate);
    }
  });
  g_profiler.est_alloc.store(inuse, std::memory_order_relaxed);
  g_profiler.est_free.store(0, std::memory_order_relaxed);
}

// A HEAPPROFILE dump's comment block: the memory figures (memory_breakdown.h), then the
// residency per stack when HEAP_PROFILE_RESIDENCY is on (stack_residency.h), then the lifetime
// and age lines (object_times_dump.h).
void AppendDumpComments(OutputSink* sink) {
  AppendMemoryBreakdown(sink);
  if (StackResidencyEnabled()) AppendStackResidency(sink);
  AppendObjectTimes(sink);
}

// "N MB", "N kB" or "N bytes": the largest unit that leaves N above zero (gperftools' lines).
void FormatAmount(int64_t bytes, char* out, size_t size) {
  if ((bytes >> 20) > 0) {
    internal::FormatTo(out, size, "%lld MB", static_cast<long long>(bytes >> 20));
  } else if ((bytes >> 10) > 0) {
    internal::FormatTo(out, size, "%lld kB", static_cast<long long>(bytes >> 10));
  } else {
    internal::FormatTo(out, size, "%lld bytes", static_cast<long long>(bytes));
  }
}

}  // namespace

bool DumpLocked(const char* reason) {
  char file[DumpFiles::kMaxName];
  g_profiler.files.NextName(file, sizeof(file));
  if (!Quiet()) internal::LogRaw("Dumping heap profile to %s (%s)", file, reason);
  int err = 0;
  LegacyProfile profile = TableProfile();
  profile.reason = reason;  // the same words as the log line, as a comment after the header
  profile.append_comments = &AppendDumpComments;
  bool ok = WriteProfileFiles(file, profile, g_profiler.config.format, &err);
  if (!ok) {
    const char* refusal = internal::ReplaceRefusal(err);
    internal::Log("failed to write heap profile %s: %s", file, refusal ? refusal : ErrName(err));
  }
  AdvanceDumpInterval();  // later allocations are younger than this dump (object_birth.h)
  // The files written beside the dump, named here; `file` is reused (the dumping thread's stack
  // holds at most two names at a time).
  if (g_profiler.config.peak_profile) {
    char peak[DumpFiles::kMaxName];
    g_profiler.files.IntervalPeakName(file, sizeof(file));
    g_profiler.files.PeakName(peak, sizeof(peak));
    WritePeakProfileLocked(file, peak, g_profiler.config.format);
  }
  if (g_profiler.config.timeline_period_ms > 0) {
    g_profiler.files.TimelineName(file, sizeof(file));
    WriteTimelineLocked(file);
  }
  int64_t alloc = g_profiler.est_alloc.load(std::memory_order_relaxed);
  int64_t freed = g_profiler.est_free.load(std::memory_order_relaxed);
  g_profiler.baselines.alloc = alloc;
  g_profiler.baselines.freed = freed;
  if (alloc - freed > g_profiler.baselines.high_water)
    g_profiler.baselines.high_water = alloc - freed;
  g_profiler.thresholds.last_dump_time_ns.store(NowNs(), std::memory_order_relaxed);
  UpdateThresholdsLocked();
  return ok;
}

void DumpIfTriggered(int64_t alloc, int64_t freed) {
  if (!g_profiler.lock.TryLock()) return;  // someone else is dumping or starting/stopping
  if (g_profiler.profiling.load(std::memory_order_relaxed) &&
      !g_profiler.exiting.load(std::memory_order_relaxed)) {
    const ProfilerConfig& c = g_profiler.config;
    const DumpBaselines b = g_profiler.baselines;
    const int64_t inuse = alloc - freed;
    char reason[160];
    reason[0] = '\0';
    long long amb = alloc / kMiB, fmb = freed / kMiB, imb = inuse / kMiB;
    if (c.allocation_interval > 0 && alloc >= b.alloc + c.allocation_interval) {
      internal::FormatTo(reason, sizeof(reason),
                         "%lld MB allocated cumulatively, %lld MB currently in use", amb, imb);
    } else if (c.deallocation_interval > 0 && freed >= b.freed + c.deallocation_interval) {
      internal::FormatTo(reason, sizeof(reason),
                         "%lld MB freed cumulatively, %lld MB currently in use", fmb, imb);
    } else if (c.inuse_interval > 0 && inuse > b.high_water + c.inuse_interval) {
      internal::FormatTo(reason, sizeof(reason), "%lld MB currently in use", imb);
    }
    if (reason[0] != '\0') DumpLocked(reason);
  }
  g_profiler.lock.Unlock();
}

void BeginProfilingLocked(const char* prefix) {
  g_profiler.files.Begin(prefix);
  ReadObjectTimeSettings(&SetSlotBirths);
  ResetEstimatesFromTable();
  BeginRssLimit(g_profiler.config.rss_limit);
  BeginTimeline(g_profiler.config.timeline_period_ms);
  if (g_profiler.config.peak_profile) BeginPeakTracking(g_profiler.est_alloc.load());
  g_profiler.baselines.alloc = g_profiler.est_alloc.load();
  g_profiler.baselines.freed = g_profiler.est_free.load();
  g_profiler.baselines.high_water = g_profiler.baselines.alloc - g_profiler.baselines.freed;
  g_profiler.peak_inuse.store(g_profiler.baselines.high_water);
  g_profiler.thresholds.last_dump_time_ns.store(NowNs());
  UpdateThresholdsLocked();
}

void RenameDumpsForChildLocked() {
  g_profiler.files.RenameForChild(static_cast<int>(getpid()));
  g_profiler.thresholds.last_dump_time_ns.store(NowNs(), std::memory_order_relaxed);
}

void ExitDump() {
  if (!g_profiler.profiling.load()) return;
  internal::SpinLockHolder h(&g_profiler.lock);
  if (!g_profiler.profiling.load() || g_profiler.exiting.exchange(true)) return;
  int64_t inuse = g_profiler.est_alloc.load() - g_profiler.est_free.load();
  if (inuse < 0) inuse = 0;
  const int64_t most_inuse = g_profiler.peak_inuse.load();
  const int64_t peak = most_inuse > inuse ? most_inuse : inuse;
  char now[32], most[32], reason[96];
  FormatAmount(inuse, now, sizeof(now));
  FormatAmount(peak, most, sizeof(most));
  internal::FormatTo(reason, sizeof(reason), "Exiting, %s in use (peak %s)", now, most);
  DumpLocked(reason);
}

bool WriteTableProfile(OutputSink* sink) { return WriteLegacyProfile(sink, TableProfile()); }

}  // namespace heapkit::prof
