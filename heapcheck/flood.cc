#include "heapcheck/flood.h"

#include <algorithm>
#include <cstring>

#include "alloc/internal/dcheck.h"

namespace heapkit::check {
namespace {

constexpr int kIndexPageShift = 12;

inline size_t PageSlot(uintptr_t page, size_t mask) {
  return static_cast<size_t>((page * 0x9e3779b97f4a7c15ULL) >> 20) & mask;
}

// A prefetch the compiler keeps: GCC drops __builtin_prefetch from a loop whose only effects
// are prefetches (Finder::Prefetch's probe), as a loop without observable behaviour.
inline void PrefetchLine(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 (%0)" : : "r"(p));
#else
  __builtin_prefetch(p);
#endif
}

struct Finder {
  const HeapObject* objects;
  size_t count;
  uintptr_t lowest;
  uintptr_t highest;    // exclusive end of the last object
  uint64_t max_offset;  // UINT64_MAX = any
  const PageIndex* index;
  const uint8_t* states = nullptr;  // the flood's, for Prefetch

  // Starts the loads a later Find(w) and its visit will wait for: the objects of w's page (the
  // search's cache lines) and their states. On a large heap nearly every pointer lands on a
  // page and an object whose lines are not cached, and each scanned word waited for those
  // two misses in turn; issued a few words ahead, they overlap. Changes no result.
  void Prefetch(uintptr_t w) const {
    if (w < lowest || w >= highest || index == nullptr) return;
    const PageIndexEntry* e = EntryOf(w);
    if (e == nullptr) return;
    const char* first = reinterpret_cast<const char*>(&objects[e->lo]);
    const char* last = reinterpret_cast<const char*>(&objects[e->hi - 1]);
    for (int line = 0; line < 6 && first <= last; ++line, first += 64) PrefetchLine(first);
    PrefetchLine(&states[e->lo]);
  }

  // The page index entry Prefetch(w) will read.
  void PrefetchSlot(uintptr_t w) const {
    if (w < lowest || w >= highest) return;
    PrefetchLine(&index->entries[PageSlot(w >> kIndexPageShift, index->mask)]);
  }

  // The index entry of w's page; null if no object starts in it. index must be set.
  const PageIndexEntry* EntryOf(uintptr_t w) const {
    const uintptr_t page = w >> kIndexPageShift;
    for (size_t i = PageSlot(page, index->mask);; i = (i + 1) & index->mask) {
      const PageIndexEntry& e = index->entries[i];
      if (e.page == page) return &e;
      if (e.page == 0) return nullptr;
    }
  }

  int64_t Find(uintptr_t w) const {
    if (w < lowest || w >= highest) return -1;
    // Last object with start <= w: among the objects of w's page if the index knows it.
    size_t lo = 0, n = count;
    if (index != nullptr) {
      if (const PageIndexEntry* e = EntryOf(w)) {
        lo = e->lo;
        n = e->hi - e->lo;
      }
    }
    while (n > 1) {
      size_t half = n / 2;
      if (objects[lo + half].start <= w) lo += half;
      n -= half;
    }
    // Offsets 0..size: a pointer one past the end points to its own object. No other object
    // starts there: the allocator reserves a byte past every recorded object (README.md, "What
    // is a leak"), and an object that does start there is the one this search finds.
    const HeapObject& o = objects[lo];
    uintptr_t off = w - o.start;
    if (w < o.start || off > o.size || off > max_offset) return -1;
    return static_cast<int64_t>(lo);
  }
};

Finder MakeFinder(const HeapObject* objects, size_t count, int64_t max_pointer_offset,
                  const PageIndex* index = nullptr) {
  Finder f{objects,
           count,
           1,
           0,
           max_pointer_offset < 0 ? UINT64_MAX : static_cast<uint64_t>(max_pointer_offset),
           index != nullptr && index->entries != nullptr ? index : nullptr};
  if (count > 0) {
    f.lowest = objects[0].start;
    const HeapObject& last = objects[count - 1];
    f.highest = last.start + last.size + 1;
  }
  return f;
}

inline uintptr_t LoadWord(uintptr_t address) {
  uintptr_t w;
  std::memcpy(&w, reinterpret_cast<const void*>(address), sizeof(w));
  return w;
}

// How many words ahead ScanRange prefetches what a word's lookup will load.
constexpr size_t kPrefetchWords = 8;

// Calls visit(index) for every object hit by a word in [start, end), in address order.
template <typename Visit>
inline size_t ScanRange(const Finder& finder, uintptr_t start, uintptr_t end, size_t alignment,
                        Visit&& visit) {
  uintptr_t p = (start + alignment - 1) & ~(alignment - 1);
  size_t words = 0;
  const uintptr_t ahead = kPrefetchWords * alignment;
  if (finder.index != nullptr) {
    // The words whose ahead-word is still inside the range (never read past `end`).
    for (;
         end >= ahead + sizeof(uintptr_t) && p <= end - ahead - sizeof(uintptr_t) && p + ahead > p;
         p += alignment) {
      ++words;
      if (p + 2 * ahead + sizeof(uintptr_t) <= end) finder.PrefetchSlot(LoadWord(p + 2 * ahead));
      finder.Prefetch(LoadWord(p + ahead));
      int64_t hit = finder.Find(LoadWord(p));
      if (hit >= 0) visit(static_cast<uint32_t>(hit));
    }
  }
  for (; p + sizeof(uintptr_t) <= end && p + sizeof(uintptr_t) > p; p += alignment) {
    ++words;
    int64_t hit = finder.Find(LoadWord(p));
    if (hit >= 0) visit(static_cast<uint32_t>(hit));
  }
  return words;
}

// ScanRange over an object's bytes, minus the parts in unreadable memory (counted in stats).
template <typename Visit>
inline size_t ScanObject(const Finder& finder, const HeapObject& o, size_t alignment,
                         const FloodOptions& options, FloodStats* stats, Visit&& visit) {
  uintptr_t start = o.start;
  const uintptr_t end = o.start + o.size;
  if (options.unreadable_count == 0) return ScanRange(finder, start, end, alignment, visit);
  const Region* hole =
      std::upper_bound(options.unreadable, options.unreadable + options.unreadable_count, start,
                       [](uintptr_t a, const Region& r) { return a < r.end; });
  const Region* holes_end = options.unreadable + options.unreadable_count;
  size_t words = 0;
  for (; hole != holes_end && hole->start < end; ++hole) {
    if (hole->start > start) words += ScanRange(finder, start, hole->start, alignment, visit);
    const uintptr_t skip_to = hole->end < end ? hole->end : end;
    ++stats->unreadable_ranges_skipped;
    stats->unreadable_bytes_skipped += skip_to - (hole->start > start ? hole->start : start);
    start = skip_to;
  }
  if (start < end) words += ScanRange(finder, start, end, alignment, visit);
  return words;
}

// The work stack's next pops, if the object being scanned pushes nothing (on a large heap most
// of the flood's objects are already marked when they are scanned): the entry of the one after
// next, and the first lines of the next one (its entry was prefetched a pop earlier).
inline void PrefetchNextPops(const HeapObject* objects, const uint32_t* work, size_t top) {
  if (top >= 2) PrefetchLine(&objects[work[top - 2]]);
  if (top >= 1) {
    const HeapObject& next = objects[work[top - 1]];
    const size_t bytes = next.size < 256 ? next.size : 256;
    for (size_t at = 0; at < bytes; at += 64)
      PrefetchLine(reinterpret_cast<const char*>(next.start) + at);
  }
}

}  // namespace

size_t PageIndexCapacity(const HeapObject* objects, size_t n) {
  size_t pages = 0;
  uintptr_t last = 0;
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t p = objects[i].start >> kIndexPageShift;
    if (p != last) ++pages;
    last = p;
  }
  size_t cap = 16;
  while (cap < 2 * pages) cap *= 2;
  return cap;
}

PageIndex BuildPageIndex(const HeapObject* objects, size_t n, PageIndexEntry* memory,
                         size_t capacity) {
  PageIndex index;
  if (memory == nullptr || capacity == 0 || (capacity & (capacity - 1)) != 0 || n >= UINT32_MAX)
    return index;
  const size_t mask = capacity - 1;
  PageIndexEntry* open = nullptr;  // entry of the page being filled
  uintptr_t last = 0;
  size_t used = 0;
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t p = objects[i].start >> kIndexPageShift;
    if (p == last || p == 0) continue;
    if (++used > capacity / 2) return PageIndex{};  // not built by PageIndexCapacity
    if (open != nullptr) open->hi = static_cast<uint32_t>(i);
    size_t k = PageSlot(p, mask);
    while (memory[k].page != 0) k = (k + 1) & mask;
    memory[k] = {p, static_cast<uint32_t>(i > 0 ? i - 1 : 0), 0};
    open = &memory[k];
    last = p;
  }
  if (open != nullptr) open->hi = static_cast<uint32_t>(n);
  index.entries = memory;
  index.mask = mask;
  return index;
}

int64_t FindObject(const HeapObject* objects, size_t object_count, uintptr_t address,
                   int64_t max_pointer_offset) {
  if (object_count == 0) return -1;
  return MakeFinder(objects, object_count, max_pointer_offset).Find(address);
}

bool Flood(const HeapObject* objects, size_t n, const Region* roots, size_t root_count,
           const FloodOptions& options, uint8_t* states, uint32_t* work, FloodStats* stats,
           const PageIndex* index) {
  for (size_t i = 1; i < n; ++i) {
    const HeapObject& prev = objects[i - 1];
    if (objects[i].start < prev.start + (prev.size == 0 ? 1 : prev.size)) return false;
  }
  size_t alignment = options.source_alignment;
  if (alignment == 0 || alignment > sizeof(uintptr_t) || (alignment & (alignment - 1)) != 0)
    alignment = sizeof(uintptr_t);
  FloodStats local;
  if (n == 0) {  // before the memset: states may be null then, and memset(nullptr, 0) is UB
    if (stats) *stats = local;
    return true;
  }
  std::memset(states, kUnvisited, n);
  Finder finder = MakeFinder(objects, n, options.max_pointer_offset, index);
  finder.states = states;

  // Phase 1: everything reachable from roots and root objects.
  size_t top = 0;
  auto mark = [&](uint32_t k) {
    HEAPKIT_DCHECK(k < n);
    if (states[k] == kUnvisited) {
      HEAPKIT_DCHECK(top < n);  // each object is pushed at most once per phase
      states[k] = kReachable;
      work[top++] = k;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (objects[i].flags & kLiveObject) states[i] = kReachable;  // never pushed: not scanned
  }
  for (size_t r = 0; r < root_count; ++r) {
    local.words_scanned += ScanRange(finder, roots[r].start, roots[r].end, alignment, mark);
  }
  for (size_t i = 0; i < n; ++i) {
    if (objects[i].flags & kRootObject) mark(static_cast<uint32_t>(i));
  }
  while (top > 0) {
    const HeapObject& o = objects[work[--top]];
    PrefetchNextPops(objects, work, top);
    local.words_scanned += ScanObject(finder, o, alignment, options, &local, mark);
  }

  // Phase 2: classify leaked objects. Each unprocessed leaked object in address order becomes a
  // candidate direct leak and floods what it reaches as indirect. A candidate reached later from
  // another leaked object is demoted to indirect (its subtree is already marked).
  for (size_t i = 0; i < n; ++i) {
    if (states[i] != kUnvisited) continue;
    HEAPKIT_DCHECK(top == 0);  // the previous candidate's flood is complete
    const uint32_t root = static_cast<uint32_t>(i);
    states[root] = kLeakedDirect;
    work[top++] = root;
    auto demote = [&](uint32_t k) {
      if (k == root) return;
      if (states[k] == kUnvisited) {
        HEAPKIT_DCHECK(top < n);
        states[k] = kLeakedIndirect;
        work[top++] = k;
      } else if (states[k] == kLeakedDirect) {
        states[k] = kLeakedIndirect;
      }
    };
    while (top > 0) {
      const HeapObject& o = objects[work[--top]];
      PrefetchNextPops(objects, work, top);
      local.words_scanned += ScanObject(finder, o, alignment, options, &local, demote);
    }
  }

  for (size_t i = 0; i < n; ++i) {
    switch (states[i]) {
      case kReachable: ++local.reachable_objects; break;
      case kLeakedDirect: ++local.leaked_direct; break;
      case kLeakedIndirect: ++local.leaked_indirect; break;
      default: break;
    }
  }
  if (stats) *stats = local;
  return true;
}

}  // namespace heapkit::check
