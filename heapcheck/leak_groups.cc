#include "heapcheck/leak_groups.h"

#include <algorithm>
#include <cstring>

#include "heapcheck/suppressed_closure.h"

namespace heapkit::check {

bool LeakGroups::SameStack(const LeakRecord& a, const LeakRecord& b) const {
  return a.depth == b.depth && std::memcmp(Stack(a), Stack(b), a.depth * sizeof(uintptr_t)) == 0;
}

// By (state, stack), then address: equal keys become neighbours.
void LeakGroups::SortRecords() {
  std::sort(order_.begin(), order_.end(), [&](uint32_t x, uint32_t y) {
    const LeakRecord& a = result_.leaks[x];
    const LeakRecord& b = result_.leaks[y];
    if (a.state != b.state) return a.state < b.state;
    if (a.depth != b.depth) return a.depth < b.depth;
    int c = std::memcmp(Stack(a), Stack(b), a.depth * sizeof(uintptr_t));
    if (c != 0) return c < 0;
    return a.address < b.address;
  });
}

void LeakGroups::FormGroups() {
  const size_t n = order_.size();
  for (size_t i = 0; i < n;) {
    const LeakRecord& head = result_.leaks[order_[i]];
    LeakGroup g{static_cast<uint32_t>(i), 0, 0, head.state, false, false};
    size_t j = i;
    while (j < n && result_.leaks[order_[j]].state == head.state &&
           SameStack(result_.leaks[order_[j]], head)) {
      g.bytes += result_.leaks[order_[j]].bytes;
      ++g.count;
      ++j;
    }
    groups_.PushBack(g);
    i = j;
  }
}

bool LeakGroups::Build() {
  const size_t n = result_.leaks.size();
  if (!order_.Resize(n)) return false;
  for (size_t i = 0; i < n; ++i) order_[i] = static_cast<uint32_t>(i);
  SortRecords();
  FormGroups();
  std::sort(groups_.begin(), groups_.end(), [](const LeakGroup& a, const LeakGroup& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.count != b.count) return a.count > b.count;
    return a.state < b.state;  // direct first
  });
  return true;
}

// hidden[i]: record i is owned by suppressed leaks only.
bool LeakGroups::MarkHidden(const ProcMaps& maps, const FloodOptions& flood,
                            MmapArray<uint8_t>* hidden) {
  const size_t n = result_.leaks.size();
  MmapArray<uint8_t> suppressed;
  MmapArray<Region> unreadable;
  if (!suppressed.Resize(n) || !hidden->Resize(n) || !maps.CollectUnreadable(&unreadable))
    return false;
  for (size_t i = 0; i < n; ++i) suppressed[i] = 0;
  for (const LeakGroup& g : groups_)
    for (uint32_t k = 0; g.suppressed && k < g.count; ++k) suppressed[order_[g.first + k]] = 1;
  FloodOptions options = flood;
  options.unreadable = unreadable.data();
  options.unreadable_count = unreadable.size();
  return FindLeaksOwnedBySuppressed(result_.leaks.data(), n, suppressed.data(), options,
                                    hidden->data());
}

void LeakGroups::HideOwnedBySuppressed(const ProcMaps& maps, const FloodOptions& flood,
                                       LeakTotals* reported, LeakTotals* suppressed) {
  MmapArray<uint8_t> hidden;
  if (!MarkHidden(maps, flood, &hidden)) return;
  for (LeakGroup& g : groups_) {
    if (g.suppressed) continue;
    uint32_t* begin = order_.data() + g.first;
    uint32_t* kept_end =
        std::stable_partition(begin, begin + g.count, [&](uint32_t r) { return !hidden[r]; });
    for (uint32_t* r = kept_end; r != begin + g.count; ++r) {
      const uint64_t bytes = result_.leaks[*r].bytes;
      g.bytes -= bytes;
      suppressed->bytes += bytes;
      ++suppressed->objects;
      if (!g.dropped) {
        reported->bytes -= bytes;
        --reported->objects;
      }
    }
    g.count = static_cast<uint32_t>(kept_end - begin);
    if (g.count == 0) g.dropped = g.suppressed = true;
  }
}

}  // namespace heapkit::check
