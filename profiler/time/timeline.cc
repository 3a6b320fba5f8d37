// The timeline (timeline.h).
#include "profiler/time/timeline.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc/internal/arena.h"
#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "alloc/observer_hooks.h"
#include "alloc/stats.h"
#include "profiler/format/legacy_writer.h"
#include "profiler/format/output_sink.h"
#include "profiler/time/peak_tracker.h"
#include "profiler/base/profiler_basics.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/table/stack_table.h"
#include "alloc/sampling_period.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {
namespace {

constexpr const char* kVariable = "HEAP_PROFILE_TIMELINE";

struct Row {
  int64_t t_ms;   // since the start
  int64_t exact;  // allocator's in-use bytes
  int64_t rss;
  int64_t est;  // sampled estimate
  uint32_t ids[kTopStacks];
  int32_t counts[kTopStacks];
  int64_t bytes[kTopStacks];
};
static_assert(sizeof(Row) == 160);

// Guarded by the state lock.
struct Timeline {
  Row* rows = nullptr;  // kTimelineRows, from the arena (kept across restarts)
  int used = 0;
  int64_t period_ms = 0;  // 0: off
  int64_t ticks_per_row = 1;
  int64_t ticks = 0;
  int64_t start_ns = 0, start_unix_ms = 0, next_ns = 0;
  Row pending = {};  // the maximum of the ticks of the row being filled
  int64_t pending_ticks = 0;
  int statm = -1;
  int statm_pid = 0;
};
constinit Timeline g_timeline;

int64_t RssBytes() {
  if (g_timeline.statm_pid != static_cast<int>(getpid())) {  // first use, or a forked child
    if (g_timeline.statm >= 0) close(g_timeline.statm);
    g_timeline.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    g_timeline.statm_pid = static_cast<int>(getpid());
  }
  char text[128];
  ssize_t n = g_timeline.statm >= 0 ? pread(g_timeline.statm, text, sizeof(text) - 1, 0) : -1;
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* p = strchr(text, ' ');
  int64_t pages = 0;
  for (p = p != nullptr ? p + 1 : text + n; *p >= '0' && *p <= '9'; ++p)
    pages = pages * 10 + (*p - '0');
  return pages * sysconf(_SC_PAGESIZE);
}

// Keeps the kTopStacks largest (by raw bytes) of the visited cells in `row`.
void KeepTop(void* ctx, uint32_t id, int64_t count, int64_t bytes) {
  Row* row = static_cast<Row*>(ctx);
  int smallest = 0;
  for (int i = 1; i < kTopStacks; ++i)
    if (row->bytes[i] < row->bytes[smallest]) smallest = i;
  if (bytes <= row->bytes[smallest]) return;
  row->ids[smallest] = id;
  row->counts[smallest] = static_cast<int32_t>(count > INT32_MAX ? INT32_MAX : count);
  row->bytes[smallest] = bytes;
}

void Append(const Row& row) {
  Timeline& t = g_timeline;
  if (t.used == kTimelineRows) {  // halve the resolution, keeping each pair's maximum
    for (int i = 0; i < kTimelineRows / 2; ++i) {
      const Row& a = t.rows[2 * i];
      const Row& b = t.rows[2 * i + 1];
      t.rows[i] = b.exact > a.exact ? b : a;
    }
    t.used = kTimelineRows / 2;
    t.ticks_per_row *= 2;
    return;  // `row` was the maximum of half a new row's ticks: it goes on as pending
  }
  t.rows[t.used++] = row;
}

void RecordTick(int64_t now_ns) {
  Timeline& t = g_timeline;
  Row row = {};
  alloc::AllocatorStats stats;
  alloc::GetAllocatorStats(&stats);
  row.exact = static_cast<int64_t>(stats.in_use_bytes);
  row.rss = RssBytes();
  // The row's time is the moment the stacks were read (the helper thread may be preempted
  // between the figures; the stacks are what the tests compare with the truth).
  int64_t when_ns = now_ns;
  row.est = ForEachLiveCell(&KeepTop, &row, &when_ns);
  row.t_ms = (when_ns - t.start_ns) / 1000000;
  ++t.ticks;
  if (t.pending_ticks == 0 || row.exact > t.pending.exact) t.pending = row;
  if (++t.pending_ticks < t.ticks_per_row) return;
  const int64_t per_row = t.ticks_per_row;
  Append(t.pending);
  // A halving made rows twice as long: the pending maximum covers half of the new row.
  t.pending_ticks = t.ticks_per_row != per_row ? t.pending_ticks : 0;
}

// The row with the highest exact in-use (nullptr: none).
const Row* PeakRow() {
  const Row* best = nullptr;
  for (int i = 0; i < g_timeline.used; ++i)
    if (best == nullptr || g_timeline.rows[i].exact > best->exact) best = &g_timeline.rows[i];
  return best;
}

// The ids that appear in any row, each once: visited in id order with its raw in-use at `at`.
template <typename Fn>
void ForEachId(const Row* at, Fn&& fn) {
  uint32_t last = 0;
  for (;;) {  // the smallest id above `last` (rows * kTopStacks: a few tens of thousands)
    uint32_t next = UINT32_MAX;
    for (int r = 0; r < g_timeline.used; ++r)
      for (int k = 0; k < kTopStacks; ++k) {
        const uint32_t id = g_timeline.rows[r].ids[k];
        if (id > last && id < next) next = id;
      }
    if (next == UINT32_MAX) return;
    int64_t count = 0, bytes = 0;
    for (int k = 0; at != nullptr && k < kTopStacks; ++k)
      if (at->ids[k] == next) count = at->counts[k], bytes = at->bytes[k];
    fn(next, count, bytes);
    last = next;
  }
}

void VisitRecords(void*, RecordVisitor visit, void* visit_ctx) {
  const StackTable& table = GlobalStackTable();
  ForEachId(PeakRow(), [&](uint32_t id, int64_t count, int64_t bytes) {
    const Bucket* b = table.BucketById(id);
    if (b == nullptr) return;
    void* pcs[kMaxStackDepth];
    RecordCounts c{count, bytes, 0, 0};
    visit(visit_ctx, c, pcs, table.ReadStack(*b, pcs, kMaxStackDepth));
  });
}

void AppendTimelineComments(OutputSink* sink) {
  const Timeline& t = g_timeline;
  sink->Append("# heapkit: timeline period_ms ");
  sink->AppendDecimal(t.period_ms * t.ticks_per_row);
  sink->Append(" ticks ");
  sink->AppendDecimal(t.ticks);
  sink->Append(" start_unix ");
  sink->AppendDecimal(t.start_unix_ms / 1000);
  sink->AppendChar('.');
  const int64_t ms = t.start_unix_ms % 1000;  // three digits (AppendDecimal pads with spaces)
  if (ms < 100) sink->AppendChar('0');
  if (ms < 10) sink->AppendChar('0');
  sink->AppendDecimal(ms);
  sink->Append(" start_ns ");
  sink->AppendDecimal(t.start_ns);
  sink->Append(" rate ");
  sink->AppendDecimal(alloc::SamplingPeriod());
  sink->AppendChar('\n');
  const StackTable& table = GlobalStackTable();
  ForEachId(nullptr, [&](uint32_t id, int64_t, int64_t) {
    const Bucket* b = table.BucketById(id);
    if (b == nullptr) return;
    void* pcs[kMaxStackDepth];
    const int depth = table.ReadStack(*b, pcs, kMaxStackDepth);
    sink->Append("# heapkit: timeline stack ");
    sink->AppendDecimal(id);
    sink->Append(" @");
    for (int i = 0; i < depth; ++i) {
      sink->AppendChar(' ');
      sink->AppendHex(reinterpret_cast<uintptr_t>(pcs[i]), 16);
    }
    sink->AppendChar('\n');
  });
  for (int r = 0; r < t.used; ++r) {
    const Row& row = t.rows[r];
    sink->Append("# heapkit: timeline row ");
    sink->AppendDecimal(row.t_ms);
    sink->Append(" exact ");
    sink->AppendDecimal(row.exact);
    sink->Append(" rss ");
    sink->AppendDecimal(row.rss);
    sink->Append(" est ");
    sink->AppendDecimal(row.est);
    for (int k = 0; k < kTopStacks; ++k) {
      if (row.ids[k] == 0) continue;
      sink->AppendChar(' ');
      sink->AppendDecimal(row.ids[k]);
      sink->AppendChar(':');
      sink->AppendDecimal(row.counts[k]);
      sink->AppendChar(':');
      sink->AppendDecimal(row.bytes[k]);
    }
    sink->AppendChar('\n');
  }
}

}  // namespace

bool ParseTimelinePeriod(const char* text, int64_t* ms) {
  int64_t v = 0;
  const char* p = text;
  if (*p < '0' || *p > '9') return false;
  for (; *p >= '0' && *p <= '9'; ++p) {
    v = v * 10 + (*p - '0');
    if (v > 3600000) return false;
  }
  if (strcmp(p, "s") == 0) {
    v *= 1000;
  } else if (*p != '\0' && strcmp(p, "ms") != 0) {
    return false;
  }
  if (v < 10 || v > 3600000) return false;
  *ms = v;
  return true;
}

int64_t ReadTimelinePeriodMs() {
  const char* raw = internal::SettingText(ProfilerSetting(kVariable));
  if (raw == nullptr || raw[0] == '\0') return 0;
  int64_t ms = 0;
  if (!ParseTimelinePeriod(raw, &ms)) {
    char shown[internal::kPrintableValueSize];
    internal::Log(
        "ignoring %s='%s': expected a period of 10ms..3600s (e.g. 100ms, 2s); no "
        "timeline",
        kVariable, internal::PrintableValue(raw, shown, sizeof(shown)));
    return 0;
  }
  return ms;
}

void BeginTimeline(int64_t period_ms) {
  Timeline& t = g_timeline;
  Row* rows = t.rows;
  const int statm = t.statm, statm_pid = t.statm_pid;
  t = Timeline{};
  t.rows = rows;
  t.statm = statm;
  t.statm_pid = statm_pid;
  if (period_ms <= 0) return;
  if (t.rows == nullptr)
    t.rows = static_cast<Row*>(internal::ArenaAlloc(sizeof(Row) * kTimelineRows, 4096));
  if (t.rows == nullptr) {
    internal::Log("%s: cannot allocate the timeline's %zu bytes; no timeline", kVariable,
                  sizeof(Row) * kTimelineRows);
    return;
  }
  t.period_ms = period_ms;
  t.start_ns = NowNs();
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  t.start_unix_ms = static_cast<int64_t>(wall.tv_sec) * 1000 + wall.tv_nsec / 1000000;
  t.next_ns = t.start_ns;
}

int TimelinePollMs() {
  if (g_timeline.period_ms <= 0) return -1;
  const int64_t left = g_timeline.next_ns - NowNs();
  return left <= 0 ? 0 : static_cast<int>((left + 999999) / 1000000);
}

void TimelineTickLocked() {
  Timeline& t = g_timeline;
  if (t.period_ms <= 0) return;
  const int64_t now = NowNs();
  if (now < t.next_ns) return;
  RecordTick(now);
  // Missed ticks (a long dump) are not made up: the next one is a period from now.
  t.next_ns += t.period_ms * 1000000;
  if (t.next_ns <= now) t.next_ns = now + t.period_ms * 1000000;
}

void WriteTimelineLocked(const char* file) {
  if (g_timeline.period_ms <= 0) return;
  const int64_t rate = alloc::SamplingPeriod();
  LegacyProfile p;
  p.kind = rate <= 1 ? ProfileKind::kHeapExact : ProfileKind::kHeapSampled;
  p.sample_rate = rate;
  p.source = &VisitRecords;
  p.reason = "timeline: the live set at the row of the highest exact in-use";
  p.append_comments = &AppendTimelineComments;
  int err = 0;
  if (!WriteLegacyProfileFile(file, p, &err)) {
    const char* refusal = internal::ReplaceRefusal(err);
    internal::Log("failed to write heap timeline %s: %s", file, refusal ? refusal : ErrName(err));
  }
}

}  // namespace heapkit::prof
