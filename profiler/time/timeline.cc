// The timeline (timeline.h).
#include "profiler/time/timeline.h"

#include <fcntl.h>
#include <algorithm>
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
#include "alloc/sample_weight.h"
#include "alloc/sampling_period.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {
namespace {

constexpr const char* kVariable = "HEAP_PROFILE_TIMELINE";

// A stack's raw sampled in-use in a row.
struct Entry {
  uint32_t id;
  uint32_t count;  // saturated at UINT32_MAX
  int64_t bytes;
};
static_assert(sizeof(Entry) == 16);

struct Row {
  int64_t t_ms;   // since the start
  int64_t exact;  // exact in-use bytes: requested in exact mode, else the allocator's usable
  int64_t rss;
  int64_t est;      // sampled estimate
  uint32_t first;   // its stacks: entries [first, first + stacks) of the pool
  uint32_t stacks;  // (the pending row's: of its scratch buffer)
};
static_assert(sizeof(Row) == 40);

// A bucket a tick may keep, with the bytes it stands for (un-sampled as the pprofs un-sample
// a line: the rows are ranked by what they hold of the heap, not by raw sampled bytes, which
// undercount small objects by up to the sampling period over their size).
struct Candidate {
  Entry e;
  double weight;
};

// Guarded by the state lock.
struct Timeline {
  Row* rows = nullptr;    // kTimelineRows, from the arena (kept across restarts)
  Entry* pool = nullptr;  // kTimelineEntries: the rows' stacks, in row order
  Candidate* scratch[2] = {nullptr, nullptr};  // kMaxRowStacks each: the pending row's, a tick's
  int pending_buffer = 0;                      // which scratch buffer is the pending row's
  int used = 0;
  uint32_t pool_used = 0;
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

constexpr size_t kTimelineBytes = sizeof(Row) * kTimelineRows + sizeof(Entry) * kTimelineEntries +
                                  sizeof(Candidate) * 2 * kMaxRowStacks;

bool ExactCountsRequested() { return alloc::SamplingPeriod() <= 1; }

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

// A tick's pick: the kMaxRowStacks largest visited cells (by the bytes they stand for), a
// min-heap while visiting (under the tracker's lock: O(log kMaxRowStacks) per cell at most).
struct Pick {
  Candidate* heap;
  int n = 0;
  double rate = 1;
  double total = 0;  // every visited cell's weight
};

bool Smaller(const Candidate& a, const Candidate& b) { return a.weight < b.weight; }

// The bytes `count` sampled objects of `bytes` stand for (alloc::UnsampleLine's), without exp()
// below the period: the tick runs under the tracker's lock, which sampled allocations take.
// For a mean size s = x·R with x < 1, s / (1 - e^-x) = R·(1 + x/2 + x²/12 - x⁴/720 ...), so
// count·R + bytes/2 + bytes·x/12 is within 0.14 % (x⁴/720 at x = 1) of the exact weight.
double Weight(int64_t count, int64_t bytes, double rate) {
  const double n = static_cast<double>(count), b = static_cast<double>(bytes);
  if (rate <= 1 || count <= 0) return b;
  if (b < n * rate) return n * rate + b / 2 + b * b / (12 * n * rate);
  return alloc::UnsampleLine(count, bytes, rate).bytes;
}

void SiftDown(Candidate* heap, int n, int i) {
  for (;;) {
    int least = i;
    const int l = 2 * i + 1, r = l + 1;
    if (l < n && Smaller(heap[l], heap[least])) least = l;
    if (r < n && Smaller(heap[r], heap[least])) least = r;
    if (least == i) return;
    const Candidate c = heap[i];
    heap[i] = heap[least];
    heap[least] = c;
    i = least;
  }
}

void KeepLargest(void* ctx, uint32_t id, int64_t count, int64_t bytes) {
  Pick* pick = static_cast<Pick*>(ctx);
  const double weight = Weight(count, bytes, pick->rate);
  pick->total += weight;
  const Candidate c{{id, static_cast<uint32_t>(count > UINT32_MAX ? UINT32_MAX : count), bytes},
                    weight};
  if (pick->n < kMaxRowStacks) {
    int i = pick->n++;
    pick->heap[i] = c;
    while (i > 0 && Smaller(pick->heap[i], pick->heap[(i - 1) / 2])) {
      const int up = (i - 1) / 2;
      pick->heap[i] = pick->heap[up];
      pick->heap[up] = c;
      i = up;
    }
    return;
  }
  if (weight <= pick->heap[0].weight) return;
  pick->heap[0] = c;
  SiftDown(pick->heap, pick->n, 0);
}

// Sorts the pick largest first (heap sort in place) and returns how many of them the row keeps:
// the fewest that reach kRowNamedShare of the visited cells' weight.
int NamedPrefix(Pick* pick) {
  for (int n = pick->n; n > 1; --n) {  // the smallest goes last: descending order
    const Candidate c = pick->heap[0];
    pick->heap[0] = pick->heap[n - 1];
    pick->heap[n - 1] = c;
    SiftDown(pick->heap, n - 1, 0);
  }
  const double goal = kRowNamedShare * pick->total;
  double named = 0;
  int keep = 0;
  while (keep < pick->n && named < goal) named += pick->heap[keep++].weight;
  return keep;
}

// Halves the resolution: each pair of rows becomes the one with the larger exact in-use, and
// the pool keeps the survivors' stacks, moved down in row order (a row's entries never move up).
void Halve() {
  Timeline& t = g_timeline;
  uint32_t at = 0;
  int kept = 0;
  for (int i = 0; i < t.used; i += 2) {
    const Row& a = t.rows[i];
    const Row* keep = &a;
    if (i + 1 < t.used && t.rows[i + 1].exact > a.exact) keep = &t.rows[i + 1];
    Row row = *keep;
    memmove(t.pool + at, t.pool + row.first, sizeof(Entry) * row.stacks);
    row.first = at;
    at += row.stacks;
    t.rows[kept++] = row;
  }
  t.used = kept;
  t.pool_used = at;
  t.ticks_per_row *= 2;
}

// Appends the pending row (false: the ring or the pool was full and halved instead).
bool Append() {
  Timeline& t = g_timeline;
  const Row& row = t.pending;
  if (t.used == kTimelineRows || t.pool_used + row.stacks > uint32_t{kTimelineEntries}) {
    Halve();
    return false;  // the pending row was the maximum of half a new row's ticks: it goes on
  }
  Row stored = row;
  stored.first = t.pool_used;
  const Candidate* kept = t.scratch[t.pending_buffer] + row.first;
  for (uint32_t k = 0; k < row.stacks; ++k) t.pool[t.pool_used + k] = kept[k].e;
  t.pool_used += row.stacks;
  t.rows[t.used++] = stored;
  return true;
}

void RecordTick(int64_t now_ns) {
  Timeline& t = g_timeline;
  Row row = {};
  alloc::AllocatorStats stats;
  alloc::GetAllocatorStats(&stats);
  row.rss = RssBytes();
  // The row's time is the moment the stacks were read (the helper thread may be preempted
  // between the figures; the stacks are what the tests compare with the truth).
  int64_t when_ns = now_ns;
  Pick pick;
  pick.heap = t.scratch[1 - t.pending_buffer];
  pick.rate = static_cast<double>(alloc::SamplingPeriod());
  row.est = ForEachLiveCell(&KeepLargest, &pick, &when_ns);
  row.first = 0;
  row.stacks = static_cast<uint32_t>(NamedPrefix(&pick));
  row.exact = ExactCountsRequested() ? row.est : static_cast<int64_t>(stats.in_use_bytes);
  row.t_ms = (when_ns - t.start_ns) / 1000000;
  ++t.ticks;
  if (t.pending_ticks == 0 || row.exact > t.pending.exact) {
    t.pending = row;
    t.pending_buffer = 1 - t.pending_buffer;
  }
  if (++t.pending_ticks < t.ticks_per_row) return;
  // A halving made rows twice as long: the pending maximum covers half of the new row.
  t.pending_ticks = Append() ? 0 : t.pending_ticks;
}

// The row with the highest exact in-use (nullptr: none).
const Row* PeakRow() {
  const Row* best = nullptr;
  for (int i = 0; i < g_timeline.used; ++i)
    if (best == nullptr || g_timeline.rows[i].exact > best->exact) best = &g_timeline.rows[i];
  return best;
}

// The ids that appear in any row, each once: visited in id order with its raw in-use at `at`
// (0 if not in that row). Sorted in temporary blocks (the rows hold up to kTimelineEntries
// entries): all the ids, and `at`'s entries, which are then met in the same order.
template <typename Fn>
void ForEachId(const Row* at, Fn&& fn) {
  const Timeline& t = g_timeline;
  if (t.pool_used == 0) return;
  const size_t ids_size = sizeof(uint32_t) * t.pool_used;
  const uint32_t at_stacks = at != nullptr ? at->stacks : 0;
  const size_t at_size = sizeof(Entry) * (at_stacks > 0 ? at_stacks : 1);
  auto* ids = static_cast<uint32_t*>(internal::MetaAlloc(ids_size));
  auto* at_entries = static_cast<Entry*>(internal::MetaAlloc(at_size));
  if (ids != nullptr && at_entries != nullptr) {
    for (uint32_t i = 0; i < t.pool_used; ++i) ids[i] = t.pool[i].id;
    std::sort(ids, ids + t.pool_used);
    const uint32_t* end = std::unique(ids, ids + t.pool_used);
    if (at_stacks > 0) memcpy(at_entries, t.pool + at->first, sizeof(Entry) * at_stacks);
    std::sort(at_entries, at_entries + at_stacks,
              [](const Entry& a, const Entry& b) { return a.id < b.id; });
    uint32_t k = 0;
    for (const uint32_t* id = ids; id != end; ++id) {
      while (k < at_stacks && at_entries[k].id < *id) ++k;
      const bool in_row = k < at_stacks && at_entries[k].id == *id;
      fn(*id, in_row ? int64_t{at_entries[k].count} : 0, in_row ? at_entries[k].bytes : 0);
    }
  }
  if (ids != nullptr) internal::MetaFree(ids, ids_size);
  if (at_entries != nullptr) internal::MetaFree(at_entries, at_size);
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
  sink->Append(ExactCountsRequested() ? " exact requested\n" : " exact usable\n");
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
    for (uint32_t k = 0; k < row.stacks; ++k) {
      const Entry& e = t.pool[row.first + k];
      sink->AppendChar(' ');
      sink->AppendDecimal(e.id);
      sink->AppendChar(':');
      sink->AppendDecimal(e.count);
      sink->AppendChar(':');
      sink->AppendDecimal(e.bytes);
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
  Entry* pool = t.pool;
  Candidate* scratch0 = t.scratch[0];
  Candidate* scratch1 = t.scratch[1];
  const int statm = t.statm, statm_pid = t.statm_pid;
  t = Timeline{};
  t.rows = rows;
  t.pool = pool;
  t.scratch[0] = scratch0;
  t.scratch[1] = scratch1;
  t.statm = statm;
  t.statm_pid = statm_pid;
  if (period_ms <= 0) return;
  if (t.rows == nullptr) {  // one block: the rows, the pool, the two scratch buffers
    char* block = static_cast<char*>(internal::ArenaAlloc(kTimelineBytes, 4096));
    if (block == nullptr) {
      internal::Log("%s: cannot allocate the timeline's %zu bytes; no timeline", kVariable,
                    kTimelineBytes);
      return;
    }
    t.rows = reinterpret_cast<Row*>(block);
    t.pool = reinterpret_cast<Entry*>(block + sizeof(Row) * kTimelineRows);
    t.scratch[0] = reinterpret_cast<Candidate*>(t.pool + kTimelineEntries);
    t.scratch[1] = t.scratch[0] + kMaxRowStacks;
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
