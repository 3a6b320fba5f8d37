// Lifetime and age lines of the dumps (object_times_dump.h).
#include "profiler/output/object_times_dump.h"

#include "alloc/internal/arena.h"
#include "alloc/observer_hooks.h"
#include "profiler/time/lifetime_table.h"
#include "profiler/table/object_birth.h"
#include "profiler/base/profiler_basics.h"
#include "profiler/table/sample_estimate.h"
#include "profiler/record/slot_births.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/table/stack_table.h"
#include "alloc/sampling_period.h"

namespace heapkit::prof {
namespace {

// Open-addressing tally of live records: key (stored + 1; 0 empty) -> counts.
struct Tally {
  struct Entry {
    uint64_t key;
    int64_t count, bytes, estimated;
  };
  Entry* entries = nullptr;
  size_t mask = 0;
  uint64_t dropped = 0;  // records that found the table full (added after it was sized)

  bool Init(size_t keys) {
    size_t capacity = 64;
    while (capacity < 2 * keys + 64) capacity *= 2;
    entries = static_cast<Entry*>(internal::MetaAlloc(capacity * sizeof(Entry)));
    mask = capacity - 1;
    return entries != nullptr;
  }
  void Free() {
    if (entries != nullptr) internal::MetaFree(entries, (mask + 1) * sizeof(Entry));
  }
  void Add(uint64_t key, size_t size, int64_t estimated) {
    key += 1;
    size_t i = static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    for (size_t probes = 0; probes <= mask; ++probes, i = (i + 1) & mask) {
      Entry& e = entries[i];
      if (e.key != 0 && e.key != key) continue;
      e.key = key;
      e.count += 1;
      e.bytes += static_cast<int64_t>(size);
      e.estimated += estimated;
      return;
    }
    ++dropped;
  }
};

struct LivePass {
  Tally censored;  // key: alloc node << 8 | bin
  Tally ages;      // key: bucket id << 32 | interval
  bool lifetimes, ages_on;
  int64_t now, rate;
};

void AppendStack(OutputSink* sink, uint32_t node) {
  void* pcs[kMaxStackDepth];
  const int depth = GlobalStackTable().ReadStack(StackRef{node, 0}, pcs, kMaxStackDepth);
  for (int d = 0; d < depth; ++d) {
    sink->AppendChar(' ');
    sink->AppendHex(reinterpret_cast<uintptr_t>(pcs[d]), 16);
  }
}

const char* EndName(LifetimeEnd end) {
  switch (end) {
    case LifetimeEnd::kSameThread: return "same";
    case LifetimeEnd::kOtherThread: return "cross";
    case LifetimeEnd::kLive: return "live";
  }
  return "?";
}

void AppendLifetimeLine(OutputSink* sink, const LifetimeCell& c) {
  sink->Append("# heapkit: lifetime ");
  sink->AppendDecimal(kLifetimeBinLowerNs[c.bin]);
  sink->AppendChar(' ');
  sink->Append(EndName(c.end));
  sink->AppendChar(' ');
  sink->AppendDecimal(c.count);
  sink->AppendChar(' ');
  sink->AppendDecimal(c.bytes);
  sink->AppendChar(' ');
  sink->AppendDecimal(c.estimated_bytes);
  sink->Append(" @");
  AppendStack(sink, c.alloc_node);
  if (c.free_node != kNoFreeStack) {
    sink->Append(" |");
    AppendStack(sink, c.free_node);
  }
  sink->AppendChar('\n');
}

// Counts every live record with a birth into the pass's tallies: censored lifetimes by
// (allocation stack, age bin), ages by (bucket, dump interval).
void TallyLiveRecords(StackTable& table, LivePass* pass) {
  table.ForEachLiveMapRecord(
      [](void* ctx, const void*, Bucket* bucket, size_t size, const ObjectBirth& birth) {
        auto* p = static_cast<LivePass*>(ctx);
        if (birth.time_ns == 0) return;  // recorded before births were on
        if (p->lifetimes) {
          const int bin = LifetimeBin(p->now - birth.time_ns);
          p->censored.Add((uint64_t{bucket->stack} << 8) | static_cast<uint64_t>(bin), size,
                          EstimateBytes(size, p->rate));
        }
        if (p->ages_on) {
          const uint64_t id = bucket->id.load(std::memory_order_relaxed);
          p->ages.Add((id << 32) | birth.interval, size, 0);
        }
      },
      pass);
  if (pass->lifetimes) {  // exact mode's slot records with a birth word (slot_births.h)
    ForEachSlotAgeNs(
        table,
        [](void* ctx, const Bucket* bucket, size_t size, int64_t age_ns) {
          auto* p = static_cast<LivePass*>(ctx);
          const int bin = LifetimeBin(age_ns);
          p->censored.Add((uint64_t{bucket->stack} << 8) | static_cast<uint64_t>(bin), size,
                          EstimateBytes(size, p->rate));
        },
        pass);
  }
  if (pass->ages_on) {  // exact mode's slot records (they keep the interval in the slot)
    table.ForEachSlotAge(
        [](void* ctx, const Bucket* bucket, size_t size, uint32_t interval) {
          const uint64_t id = bucket->id.load(std::memory_order_relaxed);
          static_cast<LivePass*>(ctx)->ages.Add((id << 32) | interval, size, 0);
        },
        pass);
  }
}

// The `live` lifetime lines: the censored tally.
void AppendCensoredLines(OutputSink* sink, const Tally& censored) {
  for (size_t i = 0; i <= censored.mask; ++i) {
    const Tally::Entry& e = censored.entries[i];
    if (e.key == 0) continue;
    const uint64_t key = e.key - 1;
    AppendLifetimeLine(
        sink, {static_cast<uint32_t>(key >> 8), kNoFreeStack, static_cast<uint8_t>(key & 0xff),
               LifetimeEnd::kLive, e.count, e.bytes, e.estimated});
  }
}

// The age lines of dump `dump`: the ages tally.
void AppendAgeLines(OutputSink* sink, const StackTable& table, const Tally& ages, uint32_t dump) {
  sink->Append("# heapkit: ages at dump ");
  sink->AppendDecimal(dump);
  sink->AppendChar('\n');
  for (size_t i = 0; i <= ages.mask; ++i) {
    const Tally::Entry& e = ages.entries[i];
    if (e.key == 0) continue;
    const uint64_t key = e.key - 1;
    const Bucket* b = table.BucketById(static_cast<uint32_t>(key >> 32));
    if (b == nullptr) continue;
    sink->Append("# heapkit: age ");
    sink->AppendDecimal(static_cast<int64_t>(key & 0xffffffffu));
    sink->AppendChar(' ');
    sink->AppendDecimal(e.count);
    sink->AppendChar(' ');
    sink->AppendDecimal(e.bytes);
    sink->Append(" @");
    AppendStack(sink, b->stack);
    sink->AppendChar('\n');
  }
}

}  // namespace

void AppendObjectTimes(OutputSink* sink) {
  StackTable& table = GlobalStackTable();
  LivePass pass;
  pass.lifetimes = g_object_times.lifetimes.load(std::memory_order_relaxed);
  pass.ages_on = g_object_times.ages.load(std::memory_order_relaxed);
  if (!table.initialised() || !(pass.lifetimes || pass.ages_on)) return;
  pass.now = NowNs();
  pass.rate = alloc::SamplingPeriod();
  const uint32_t dump = g_object_times.interval.load(std::memory_order_relaxed) + 1;
  if (pass.lifetimes) {
    ForEachLifetimeCell(
        [](void* s, const LifetimeCell& c) {
          if (c.count != 0) AppendLifetimeLine(static_cast<OutputSink*>(s), c);
        },
        sink);
  }
  // Distinct keys: at most one per live record, and per bucket and bin / interval.
  const size_t live = table.num_live_objects();
  const size_t buckets = table.num_buckets();
  auto keys = [&](size_t per_bucket) {
    const size_t by_bucket = buckets * per_bucket;
    return live < by_bucket ? live : by_bucket;
  };
  if ((pass.lifetimes && !pass.censored.Init(keys(kLifetimeBins))) ||
      (pass.ages_on && !pass.ages.Init(keys(dump)))) {
    sink->Append("# heapkit: lifetimes and ages of live objects unavailable: out of memory\n");
    pass.censored.Free();
    pass.ages.Free();
    return;
  }
  TallyLiveRecords(table, &pass);
  if (pass.lifetimes) AppendCensoredLines(sink, pass.censored);
  if (pass.ages_on) AppendAgeLines(sink, table, pass.ages, dump);
  const uint64_t dropped = pass.censored.dropped + pass.ages.dropped;
  if (dropped != 0) {
    sink->Append("# heapkit: lifetimes and ages of ");
    sink->AppendDecimal(static_cast<int64_t>(dropped));
    sink->Append(" live objects not counted: recorded during the dump\n");
  }
  pass.censored.Free();
  pass.ages.Free();
}

}  // namespace heapkit::prof
