// The peak profile file (peak_profile.h).
#include "profiler/output/peak_profile.h"

#include <time.h>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "alloc/observer_hooks.h"
#include "profiler/format/legacy_writer.h"
#include "profiler/time/peak_tracker.h"
#include "profiler/base/profiler_basics.h"
#include "profiler/output/proto_profile_file.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/table/stack_table.h"
#include "alloc/sampling_period.h"

namespace heapkit::prof {
namespace {

struct PeakSource {
  PeakSnapshot snapshot;
  bool stale = false;  // the peak moved while the file was written
};

void VisitPeak(void* ctx, RecordVisitor visit, void* visit_ctx) {
  auto* src = static_cast<PeakSource*>(ctx);
  const StackTable& table = GlobalStackTable();
  table.ForEachBucket([&](const Bucket& b) {
    if (src->stale) return;
    RecordCounts c{0, 0, 0, 0};
    if (!PeakCounts(src->snapshot, b, &c.inuse_count, &c.inuse_bytes)) {
      src->stale = true;
      return;
    }
    if (c.inuse_count == 0) return;
    void* pcs[kMaxStackDepth];
    visit(visit_ctx, c, pcs, table.ReadStack(b, pcs, kMaxStackDepth));
  });
}

// "<whole>.<mmm>" of a nanosecond count.
void FormatSeconds(char* out, size_t size, int64_t ns) {
  if (ns < 0) ns = 0;
  internal::FormatTo(out, size, "%lld.%03lld", static_cast<long long>(ns / 1000000000),
                     static_cast<long long>(ns / 1000000 % 1000));
}

void FormatReason(char* out, size_t size, const PeakSnapshot& s) {
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  const int64_t wall_ns = static_cast<int64_t>(wall.tv_sec) * 1000000000 + wall.tv_nsec;
  char after[32], unix_time[32], from[32];
  FormatSeconds(after, sizeof(after), s.time_ns - s.start_ns);
  FormatSeconds(unix_time, sizeof(unix_time), wall_ns - (NowNs() - s.time_ns));
  FormatSeconds(from, sizeof(from), s.from_ns - s.start_ns);
  char scope[64] = "";
  if (s.scope == PeakScope::kInterval)
    internal::FormatTo(scope, sizeof(scope), " of the interval from %s s", from);
  internal::FormatTo(out, size,
                     "peak profile%s: %lld MB in use at %s s after profiling start (estimated "
                     "%lld bytes; CLOCK_MONOTONIC %lld ns; unix time %s)",
                     scope, static_cast<long long>(s.bytes / kMiB), after,
                     static_cast<long long>(s.bytes), static_cast<long long>(s.time_ns), unix_time);
}

bool WritePeakFile(const char* file, PeakScope scope, ProfileFormat format) {
  const int64_t rate = alloc::SamplingPeriod();
  int err = 0;
  bool ok = false;
  // A peak that moves during the write (another thread freed after a new maximum) makes the
  // file mix two moments: write it again from the new peak, a few times at most.
  for (int attempt = 0; attempt < 4; ++attempt) {
    PeakSource src{TakePeakSnapshot(scope)};
    char reason[256];
    FormatReason(reason, sizeof(reason), src.snapshot);
    LegacyProfile p;
    p.kind = rate <= 1 ? ProfileKind::kHeapExact : ProfileKind::kHeapSampled;
    p.sample_rate = rate;
    p.source = &VisitPeak;
    p.source_ctx = &src;
    p.reason = reason;
    ok = WriteProfileFiles(file, p, format, &err);
    if (!ok || (!src.stale && PeakUnchanged(src.snapshot))) break;
  }
  if (!ok) {
    const char* refusal = internal::ReplaceRefusal(err);
    internal::Log("failed to write peak heap profile %s: %s", file,
                  refusal ? refusal : ErrName(err));
  }
  return ok;
}

}  // namespace

bool WritePeakProfileLocked(const char* interval_file, const char* file, ProfileFormat format) {
  if (!PeakTrackingOn()) return true;
  bool ok = WritePeakFile(interval_file, PeakScope::kInterval, format);
  ResetIntervalPeak();
  return WritePeakFile(file, PeakScope::kSinceStart, format) && ok;
}

}  // namespace heapkit::prof
