#include "profiler/output/stack_residency.h"

#include <atomic>
#include <cstdint>

#include "alloc/internal/arena.h"
#include "alloc/internal/page_residency.h"
#include "alloc/span_occupancy.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/table/stack_table.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {
namespace {

// (stack -> bytes) by open addressing; key = node << 32 | leaf, stored + 1 (0: empty).
struct Entry {
  uint64_t key;
  uint64_t resident;
  uint64_t swapped;
  double stranded;
};

struct Tally {
  Entry* entries;
  size_t mask;
  internal::ResidencyReader* reader;
  uint64_t dropped;  // records that found the table full (objects added since it was sized)

  void Add(const void* object, StackRef stack, size_t size) {
    internal::PageResidency pages;
    reader->Add(reinterpret_cast<uintptr_t>(object), size, &pages);
    // The object's share of the free objects stranded in its span: a span with one object out
    // charges that object all of its free bytes.
    double stranded = 0;
    alloc::ObjectSpan span;
    if (alloc::SpanOfObject(object, &span) && span.objects_out > 0 &&
        span.objects_out < span.objects_per_span) {
      stranded =
          static_cast<double>((span.objects_per_span - span.objects_out) * span.object_size) /
          static_cast<double>(span.objects_out);
    }
    const uint64_t key = ((uint64_t{stack.node} << 32) | stack.leaf) + 1;
    size_t i = static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    for (size_t probes = 0; probes <= mask; ++probes, i = (i + 1) & mask) {
      Entry& e = entries[i];
      if (e.key != 0 && e.key != key) continue;
      e.key = key;
      e.resident += pages.resident;
      e.swapped += pages.swapped;
      e.stranded += stranded;
      return;
    }
    ++dropped;
  }
};

}  // namespace

bool StackResidencyEnabled() {
  static std::atomic<int> enabled{-1};
  int v = enabled.load(std::memory_order_relaxed);
  if (v < 0) {
    v = internal::SettingBool(ProfilerSetting("HEAP_PROFILE_RESIDENCY")) ? 1 : 0;
    enabled.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

void AppendStackResidency(OutputSink* sink) {
  StackTable& table = GlobalStackTable();
  if (!table.initialised()) return;
  // One entry per distinct stack of a live record. The dump's totals pass has already made a
  // bucket for every stack of an exact-mode slot record (ForEachBucketWithCounts), so there are
  // no more distinct stacks than buckets (and no more than records).
  size_t capacity = 64;
  const size_t live = table.num_live_objects();
  const size_t buckets = table.num_buckets();
  const size_t stacks = live < buckets ? live : buckets;
  while (capacity < 2 * stacks + 64) capacity *= 2;
  const size_t bytes = capacity * sizeof(Entry);
  auto* entries = static_cast<Entry*>(internal::MetaAlloc(bytes));
  if (entries == nullptr) {
    sink->Append("# heapkit: residency unavailable: out of memory for the table\n");
    return;
  }
  internal::ResidencyReader reader;
  Tally tally{entries, capacity - 1, &reader, 0};
  table.ForEachLiveObject([](void* ctx, const void* object, StackRef stack,
                             size_t size) { static_cast<Tally*>(ctx)->Add(object, stack, size); },
                          &tally);
  void* pcs[kMaxStackDepth];
  for (size_t i = 0; i < capacity; ++i) {
    const Entry& e = entries[i];
    if (e.key == 0) continue;
    const uint64_t key = e.key - 1;
    const StackRef stack{static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key)};
    const int depth = table.ReadStack(stack, pcs, kMaxStackDepth);
    sink->Append("# heapkit: residency ");
    sink->AppendDecimal(static_cast<int64_t>(e.resident));
    sink->AppendChar(' ');
    sink->AppendDecimal(static_cast<int64_t>(e.swapped));
    sink->AppendChar(' ');
    sink->AppendDecimal(static_cast<int64_t>(e.stranded));
    sink->Append(" @");
    for (int d = 0; d < depth; ++d) {
      sink->AppendChar(' ');
      sink->AppendHex(reinterpret_cast<uintptr_t>(pcs[d]), 16);
    }
    sink->AppendChar('\n');
  }
  if (tally.dropped != 0) {  // stacks recorded after the table was sized
    sink->Append("# heapkit: residency of ");
    sink->AppendDecimal(static_cast<int64_t>(tally.dropped));
    sink->Append(" objects not counted: their stacks are newer than the dump\n");
  }
  internal::MetaFree(entries, bytes);
}

}  // namespace heapkit::prof
