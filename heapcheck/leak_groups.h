// The check's leak records grouped for the report: one group per (allocation stack,
// direct/indirect), sorted by bytes, then objects, direct before indirect.
//
// Groups index into one permutation of the records (order), so a group's records are
// order[first .. first + count). A group is `dropped` when the report leaves it out (it matched
// a suppression) and also `suppressed` then.
// Everything lives in mmap'd memory (mmap_array.h).
#pragma once

#include <cstdint>

#include "heapcheck/flood.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/proc_maps.h"

namespace heapkit::check {

struct LeakTotals {
  uint64_t bytes = 0;
  uint64_t objects = 0;
};

struct LeakGroup {
  uint32_t first;  // index into the sorted record order
  uint32_t count;
  uint64_t bytes;
  uint8_t state;  // kLeakedDirect / kLeakedIndirect
  bool dropped;   // suppressed or filtered
  bool suppressed;
};

class LeakGroups {
 public:
  explicit LeakGroups(const CheckResult& result) : result_(result) {}

  // Groups result.leaks. False if out of memory (then there are no groups).
  bool Build();

  size_t size() const { return groups_.size(); }
  LeakGroup* begin() { return groups_.begin(); }
  LeakGroup* end() { return groups_.end(); }
  const LeakGroup* begin() const { return groups_.begin(); }
  const LeakGroup* end() const { return groups_.end(); }

  // The k-th record of a group; its first record stands for the group's stack.
  const LeakRecord& Record(const LeakGroup& g, uint32_t k) const {
    return result_.leaks[order_[g.first + k]];
  }
  const LeakRecord& Head(const LeakGroup& g) const { return Record(g, 0); }
  // The return addresses of a record's allocation stack, leaf first (r.depth of them).
  const uintptr_t* Stack(const LeakRecord& r) const { return result_.pcs.data() + r.pc_offset; }

  // Objects reachable only from suppressed leaks belong to them (suppressed_closure.h): moved
  // to the end of their group, out of its count and bytes (and out of *reported when the group
  // is reported), into *suppressed. A group left empty is dropped. Best effort: nothing moves
  // if memory or the maps cannot be had.
  void HideOwnedBySuppressed(const ProcMaps& maps, const FloodOptions& flood, LeakTotals* reported,
                             LeakTotals* suppressed);

 private:
  bool SameStack(const LeakRecord& a, const LeakRecord& b) const;
  void SortRecords();
  void FormGroups();
  bool MarkHidden(const ProcMaps& maps, const FloodOptions& flood, MmapArray<uint8_t>* hidden);

  const CheckResult& result_;
  MmapArray<uint32_t> order_;
  MmapArray<LeakGroup> groups_;
};

}  // namespace heapkit::check
