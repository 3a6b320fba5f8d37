// Unit tests of the pure reachability flood on synthetic heaps laid out in one arena.
#include "heapcheck/flood.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <vector>

namespace heapkit::check {
namespace {

// A synthetic heap: objects are carved out of one aligned buffer; roots are separate buffers.
class SyntheticHeap {
 public:
  explicit SyntheticHeap(size_t bytes) : arena_(bytes / 8 + 1, 0) {}

  // Adds an object of `size` bytes (8-aligned placement, `gap` bytes after it); returns its id.
  int Add(size_t size, size_t gap = 16) {
    uintptr_t start = base() + used_;
    used_ += (size + gap + 7) & ~size_t{7};
    objects_.push_back({start, size, 0, 0});
    return static_cast<int>(objects_.size() - 1);
  }
  uintptr_t Addr(int id, size_t offset = 0) const { return objects_[id].start + offset; }
  void Store(int from, size_t offset, uintptr_t value) {
    std::memcpy(reinterpret_cast<void*>(Addr(from, offset)), &value, sizeof(value));
  }
  void Link(int from, size_t offset, int to, size_t to_offset = 0) {
    Store(from, offset, Addr(to, to_offset));
  }
  void SetFlags(int id, uint32_t flags) { objects_[id].flags = flags; }

  std::vector<uint8_t> Run(const std::vector<Region>& roots, FloodOptions options = {},
                           FloodStats* stats = nullptr) {
    std::vector<uint8_t> states(objects_.size());
    std::vector<uint32_t> work(objects_.size());
    EXPECT_TRUE(Flood(objects_.data(), objects_.size(), roots.data(), roots.size(), options,
                      states.data(), work.data(), stats));
    // The page index only speeds lookups up: every scenario must come out the same with it.
    std::vector<PageIndexEntry> memory(PageIndexCapacity(objects_.data(), objects_.size()));
    const PageIndex index =
        BuildPageIndex(objects_.data(), objects_.size(), memory.data(), memory.size());
    EXPECT_NE(index.entries, nullptr);
    std::vector<uint8_t> indexed(objects_.size());
    EXPECT_TRUE(Flood(objects_.data(), objects_.size(), roots.data(), roots.size(), options,
                      indexed.data(), work.data(), nullptr, &index));
    EXPECT_EQ(indexed, states);
    return states;
  }
  const std::vector<HeapObject>& objects() const { return objects_; }

 private:
  uintptr_t base() const { return reinterpret_cast<uintptr_t>(arena_.data()); }
  std::vector<uint64_t> arena_;
  size_t used_ = 0;
  std::vector<HeapObject> objects_;
};

struct Roots {
  uintptr_t slots[16] = {};
  Region region() const {
    return {reinterpret_cast<uintptr_t>(slots), reinterpret_cast<uintptr_t>(slots + 16)};
  }
};

// An object with a PROT_NONE page in its middle: the flood scans its readable parts (and finds
// the pointer after the hole) and never touches the page, which would kill the process.
TEST(Flood, UnreadablePartsOfObjectsAreSkipped) {
  const size_t page = 4096;
  auto* block = static_cast<char*>(
      mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(block, MAP_FAILED);
  char* target = block + 3 * page;  // the second object: one page after the first
  std::memcpy(block + 2 * page + 64, &target, sizeof(target));  // past the hole
  ASSERT_EQ(mprotect(block + page, page, PROT_NONE), 0);
  const HeapObject objects[] = {
      {reinterpret_cast<uintptr_t>(block), 3 * page, kRootObject, 0},
      {reinterpret_cast<uintptr_t>(target), 64, 0, 0},
  };
  const Region hole{reinterpret_cast<uintptr_t>(block + page),
                    reinterpret_cast<uintptr_t>(block + 2 * page)};
  FloodOptions options;
  options.unreadable = &hole;
  options.unreadable_count = 1;
  uint8_t states[2];
  uint32_t work[2];
  FloodStats stats;
  ASSERT_TRUE(Flood(objects, 2, nullptr, 0, options, states, work, &stats));
  EXPECT_EQ(states[0], kReachable);
  EXPECT_EQ(states[1], kReachable);
  EXPECT_EQ(stats.unreadable_ranges_skipped, 1u);
  EXPECT_EQ(stats.unreadable_bytes_skipped, page);
  // Leaked objects are scanned in phase 2 too: the same hole is skipped there.
  HeapObject leaked[] = {objects[0], objects[1]};
  leaked[0].flags = 0;
  ASSERT_TRUE(Flood(leaked, 2, nullptr, 0, options, states, work, &stats));
  EXPECT_EQ(states[0], kLeakedDirect);
  EXPECT_EQ(states[1], kLeakedIndirect);
  munmap(block, 4 * page);
}

// The scan reads a few words ahead of the one it looks up (the prefetches): never past its
// range. A root region and a root object end at a PROT_NONE page, every length from 0 to 300
// bytes and every source alignment, with the page index: each finds exactly the pointers it
// holds, its last word included, and reads nothing beyond.
TEST(Flood, LookAheadStopsAtTheEndOfEachRange) {
  const size_t page = 4096;
  auto* block = static_cast<char*>(
      mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(block, MAP_FAILED);
  ASSERT_EQ(mprotect(block + page, page, PROT_NONE), 0);
  char* const end = block + page;  // the ranges end here
  // 40 target objects of 16 bytes in the third page, one per 64 bytes (so on one index page).
  std::vector<HeapObject> objects;
  char* const targets = block + 2 * page;
  std::vector<HeapObject> with_root;
  for (size_t i = 0; i < 40; ++i)
    objects.push_back({reinterpret_cast<uintptr_t>(targets + 64 * i), 16, 0, 0});
  std::vector<uint8_t> states(objects.size() + 1);
  std::vector<uint32_t> work(objects.size() + 1);
  for (size_t alignment : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    for (size_t length = 0; length <= 300; ++length) {
      SCOPED_TRACE("alignment " + std::to_string(alignment) + ", length " + std::to_string(length));
      char* const start = end - length;
      std::memset(block, 0, page);
      // Pointers at every 8th byte from the end backwards: target i in the i-th word from the end.
      size_t stored = 0;
      for (size_t i = 0; i < 40 && (i + 1) * 8 <= length; ++i, ++stored) {
        char* target = targets + 64 * i;
        std::memcpy(end - (i + 1) * 8, &target, sizeof(target));
      }
      // 1. As a root region.
      std::vector<PageIndexEntry> memory(PageIndexCapacity(objects.data(), objects.size()));
      PageIndex index =
          BuildPageIndex(objects.data(), objects.size(), memory.data(), memory.size());
      ASSERT_NE(index.entries, nullptr);
      FloodOptions options;
      options.source_alignment = alignment;
      const Region root{reinterpret_cast<uintptr_t>(start), reinterpret_cast<uintptr_t>(end)};
      ASSERT_TRUE(Flood(objects.data(), objects.size(), &root, 1, options, states.data(),
                        work.data(), nullptr, &index));
      for (size_t i = 0; i < objects.size(); ++i)
        ASSERT_EQ(states[i], i < stored ? kReachable : kLeakedDirect) << "target " << i;
      // 2. As a root object (scanned as an object: the same loop, its own end).
      if (length == 0) continue;
      with_root = objects;
      with_root.insert(with_root.begin(),
                       {reinterpret_cast<uintptr_t>(start), length, kRootObject, 0});
      std::vector<PageIndexEntry> memory2(PageIndexCapacity(with_root.data(), with_root.size()));
      index = BuildPageIndex(with_root.data(), with_root.size(), memory2.data(), memory2.size());
      ASSERT_TRUE(Flood(with_root.data(), with_root.size(), nullptr, 0, options, states.data(),
                        work.data(), nullptr, &index));
      for (size_t i = 0; i < objects.size(); ++i)
        ASSERT_EQ(states[i + 1], i < stored ? kReachable : kLeakedDirect) << "target " << i;
    }
  }
  munmap(block, 3 * page);
}

TEST(Flood, EmptyHeapAndNoRoots) {
  FloodStats stats;
  std::vector<uint8_t> states;
  EXPECT_TRUE(Flood(nullptr, 0, nullptr, 0, {}, nullptr, nullptr, &stats));
  EXPECT_EQ(stats.reachable_objects, 0u);
}

TEST(Flood, LostPointerIsDirectLeak) {
  SyntheticHeap heap(4096);
  int kept = heap.Add(32), lost = heap.Add(64);
  Roots roots;
  roots.slots[3] = heap.Addr(kept);
  FloodStats stats;
  auto s = heap.Run({roots.region()}, {}, &stats);
  EXPECT_EQ(s[kept], kReachable);
  EXPECT_EQ(s[lost], kLeakedDirect);
  EXPECT_EQ(stats.reachable_objects, 1u);
  EXPECT_EQ(stats.leaked_direct, 1u);
  EXPECT_EQ(stats.leaked_indirect, 0u);
}

TEST(Flood, IndirectChainHasOneDirectHead) {
  SyntheticHeap heap(1 << 16);
  // Build the chain in reverse address order so the head is not the lowest address.
  std::vector<int> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(heap.Add(24));
  for (int i = 9; i > 0; --i) heap.Link(ids[i], 8, ids[i - 1]);  // head = ids[9]
  FloodStats stats;
  auto s = heap.Run({});
  for (int i = 0; i < 9; ++i) EXPECT_EQ(s[ids[i]], kLeakedIndirect) << i;
  EXPECT_EQ(s[ids[9]], kLeakedDirect);
}

TEST(Flood, ReachableChainThroughManyObjects) {
  SyntheticHeap heap(1 << 20);
  std::vector<int> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(heap.Add(16));
  for (int i = 0; i + 1 < 1000; ++i) heap.Link(ids[i], 0, ids[i + 1]);
  Roots roots;
  roots.slots[0] = heap.Addr(ids[0]);
  FloodStats stats;
  auto s = heap.Run({roots.region()}, {}, &stats);
  EXPECT_EQ(stats.reachable_objects, 1000u);
}

TEST(Flood, UnreachableCycleIsOneDirectRestIndirect) {
  SyntheticHeap heap(4096);
  int a = heap.Add(16), b = heap.Add(16), c = heap.Add(16);
  heap.Link(a, 0, b);
  heap.Link(b, 0, c);
  heap.Link(c, 0, a);
  FloodStats stats;
  auto s = heap.Run({}, {}, &stats);
  EXPECT_EQ(stats.leaked_direct, 1u);
  EXPECT_EQ(stats.leaked_indirect, 2u);
  EXPECT_EQ(s[a], kLeakedDirect);
}

TEST(Flood, CycleWithOutsideReferrerMakesReferrerDirect) {
  SyntheticHeap heap(4096);
  int a = heap.Add(16), b = heap.Add(16), c = heap.Add(16);
  heap.Link(a, 0, b);
  heap.Link(b, 0, a);
  heap.Link(c, 0, a);  // c (highest address) points into the cycle
  auto s = heap.Run({});
  EXPECT_EQ(s[c], kLeakedDirect);
  EXPECT_EQ(s[a], kLeakedIndirect);
  EXPECT_EQ(s[b], kLeakedIndirect);
}

TEST(Flood, ReachableCycleIsNotLeaked) {
  SyntheticHeap heap(4096);
  int a = heap.Add(16), b = heap.Add(16);
  heap.Link(a, 0, b);
  heap.Link(b, 8, a);
  Roots roots;
  roots.slots[5] = heap.Addr(b);
  auto s = heap.Run({roots.region()});
  EXPECT_EQ(s[a], kReachable);
  EXPECT_EQ(s[b], kReachable);
}

TEST(Flood, SelfPointerDoesNotKeepAlive) {
  SyntheticHeap heap(4096);
  int a = heap.Add(32);
  heap.Link(a, 8, a);
  FloodStats stats;
  auto s = heap.Run({}, {}, &stats);
  EXPECT_EQ(s[a], kLeakedDirect);
  EXPECT_EQ(stats.leaked_indirect, 0u);
}

TEST(Flood, InteriorPointerWithinMaxOffset) {
  SyntheticHeap heap(1 << 16);
  int big = heap.Add(4096);
  Roots roots;
  roots.slots[0] = heap.Addr(big, 1000);
  EXPECT_EQ(heap.Run({roots.region()})[big], kReachable);  // default max offset 1024
  roots.slots[0] = heap.Addr(big, 2000);
  EXPECT_EQ(heap.Run({roots.region()})[big], kLeakedDirect);
  FloodOptions any;
  any.max_pointer_offset = -1;
  EXPECT_EQ(heap.Run({roots.region()}, any)[big], kReachable);
  roots.slots[0] = heap.Addr(big, 4095);
  EXPECT_EQ(heap.Run({roots.region()}, any)[big], kReachable);
  roots.slots[0] = heap.Addr(big, 4096);  // one past the end: its own object
  EXPECT_EQ(heap.Run({roots.region()}, any)[big], kReachable);
  roots.slots[0] = heap.Addr(big, 4104);  // beyond that: nothing
  EXPECT_EQ(heap.Run({roots.region()}, any)[big], kLeakedDirect);
  FloodOptions zero;
  zero.max_pointer_offset = 0;
  roots.slots[0] = heap.Addr(big, 8);
  EXPECT_EQ(heap.Run({roots.region()}, zero)[big], kLeakedDirect);
  roots.slots[0] = heap.Addr(big, 0);
  EXPECT_EQ(heap.Run({roots.region()}, zero)[big], kReachable);
}

TEST(Flood, InteriorPointerBetweenLeakedObjectsMakesIndirect) {
  SyntheticHeap heap(4096);
  int a = heap.Add(64), b = heap.Add(64);
  heap.Store(b, 0, heap.Addr(a, 40));
  auto s = heap.Run({});
  EXPECT_EQ(s[b], kLeakedDirect);
  EXPECT_EQ(s[a], kLeakedIndirect);
}

TEST(Flood, ZeroSizeObjectIsHitByItsStart) {
  SyntheticHeap heap(4096);
  int z = heap.Add(0);
  Roots roots;
  roots.slots[0] = heap.Addr(z);
  EXPECT_EQ(heap.Run({roots.region()})[z], kReachable);
}

TEST(Flood, UnalignedPointerNeedsSourceAlignmentOne) {
  SyntheticHeap heap(4096);
  int a = heap.Add(16);
  alignas(8) unsigned char buf[64] = {};
  uintptr_t p = heap.Addr(a);
  std::memcpy(buf + 3, &p, sizeof(p));
  Region r{reinterpret_cast<uintptr_t>(buf), reinterpret_cast<uintptr_t>(buf + sizeof(buf))};
  EXPECT_EQ(heap.Run({r})[a], kLeakedDirect);
  FloodOptions one;
  one.source_alignment = 1;
  EXPECT_EQ(heap.Run({r}, one)[a], kReachable);
  // 4-byte aligned source, 4-byte alignment option.
  std::memset(buf, 0, sizeof(buf));
  std::memcpy(buf + 4, &p, sizeof(p));
  FloodOptions four;
  four.source_alignment = 4;
  EXPECT_EQ(heap.Run({r}, four)[a], kReachable);
  EXPECT_EQ(heap.Run({r})[a], kLeakedDirect);
}

TEST(Flood, PointerInsideLeakedObjectPaddingPastSizeIsNotScanned) {
  SyntheticHeap heap(4096);
  int a = heap.Add(16, /*gap=*/64), b = heap.Add(16);
  heap.Store(a, 24, heap.Addr(b));  // beyond a's 16 bytes: stale slack, not a pointer
  Roots roots;
  roots.slots[0] = heap.Addr(a);
  auto s = heap.Run({roots.region()});
  EXPECT_EQ(s[a], kReachable);
  EXPECT_EQ(s[b], kLeakedDirect);
}

TEST(Flood, RootObjectsKeepWhatTheyReach) {
  SyntheticHeap heap(4096);
  int ignored = heap.Add(16), child = heap.Add(16), other = heap.Add(16);
  heap.Link(ignored, 0, child);
  heap.SetFlags(ignored, kRootObject);
  auto s = heap.Run({});
  EXPECT_EQ(s[ignored], kReachable);
  EXPECT_EQ(s[child], kReachable);
  EXPECT_EQ(s[other], kLeakedDirect);
}

TEST(Flood, RegionBoundsAreRespected) {
  SyntheticHeap heap(4096);
  int a = heap.Add(16);
  Roots roots;
  roots.slots[8] = heap.Addr(a);
  Region r = roots.region();
  r.end = reinterpret_cast<uintptr_t>(&roots.slots[8]);  // excludes slot 8
  EXPECT_EQ(heap.Run({r})[a], kLeakedDirect);
  r.end += 7;  // a partial word is not read
  EXPECT_EQ(heap.Run({r})[a], kLeakedDirect);
  r.end += 1;
  EXPECT_EQ(heap.Run({r})[a], kReachable);
}

TEST(Flood, RejectsUnsortedInput) {
  HeapObject objs[2] = {{0x2000, 16, 0, 0}, {0x1000, 16, 0, 0}};
  uint8_t states[2];
  uint32_t work[2];
  EXPECT_FALSE(Flood(objs, 2, nullptr, 0, {}, states, work, nullptr));
  HeapObject overlapping[2] = {{0x1000, 32, 0, 0}, {0x1010, 16, 0, 0}};
  EXPECT_FALSE(Flood(overlapping, 2, nullptr, 0, {}, states, work, nullptr));
}

TEST(Flood, FindObjectBoundaries) {
  HeapObject objs[3] = {{0x1000, 16, 0, 0}, {0x1010, 32, 0, 0}, {0x2000, 4096, 0, 0}};
  EXPECT_EQ(FindObject(objs, 3, 0xfff, -1), -1);
  EXPECT_EQ(FindObject(objs, 3, 0x1000, -1), 0);
  EXPECT_EQ(FindObject(objs, 3, 0x100f, -1), 0);
  EXPECT_EQ(FindObject(objs, 3, 0x1010, -1), 1);
  EXPECT_EQ(FindObject(objs, 3, 0x1030, -1), 1);  // one past the end
  EXPECT_EQ(FindObject(objs, 3, 0x1031, -1), -1);
  EXPECT_EQ(FindObject(objs, 3, 0x2fff, -1), 2);
  EXPECT_EQ(FindObject(objs, 3, 0x2fff, 1024), -1);
  EXPECT_EQ(FindObject(objs, 3, 0x3000, -1), 2);
  EXPECT_EQ(FindObject(objs, 3, 0x3000, 1024), -1);  // offset 4096 > max offset
  EXPECT_EQ(FindObject(objs, 3, 0x3001, -1), -1);
}

// A pointer one past an object's end keeps that object alive and never the object after it:
// with the checker's byte reserved past every object (the allocator's layout), no object starts
// there. (When one does, as between unrecorded objects, it is the one pointed to.)
TEST(Flood, PastTheEndPointerKeepsItsOwnObjectOnly) {
  SyntheticHeap heap(4096);
  int kept = heap.Add(64, 16), leaked = heap.Add(64);
  Roots roots;
  roots.slots[0] = heap.Addr(kept, 64);  // a vector's end(): one past its buffer
  auto s = heap.Run({roots.region()});
  EXPECT_EQ(s[kept], kReachable);
  EXPECT_EQ(s[leaked], kLeakedDirect);
  const HeapObject adjacent[2] = {{0x1000, 64, 0, 0}, {0x1040, 64, 0, 0}};
  EXPECT_EQ(FindObject(adjacent, 2, 0x1040, -1), 1);
}

// A million-object graph (a tree in address-shuffled order) floods in well under a second.
TEST(Flood, MillionObjectGraph) {
  const size_t n = 1000000;
  std::vector<uint64_t> arena(n * 4);  // 32 bytes per object
  std::vector<HeapObject> objs(n);
  for (size_t i = 0; i < n; ++i) {
    objs[i] = {reinterpret_cast<uintptr_t>(&arena[i * 4]), 24, 0, 0};
  }
  // Object i points to children 2i+1 and 2i+2 through a permutation of addresses.
  auto slot = [&](size_t i) { return (i * 7919) % n; };  // 7919 is prime, coprime with n
  for (size_t i = 0; i < n; ++i) {
    size_t me = slot(i);
    if (2 * i + 1 < n) arena[me * 4] = objs[slot(2 * i + 1)].start;
    if (2 * i + 2 < n) arena[me * 4 + 1] = objs[slot(2 * i + 2)].start + 8;  // interior
  }
  uintptr_t root = objs[slot(0)].start;
  Region r{reinterpret_cast<uintptr_t>(&root), reinterpret_cast<uintptr_t>(&root + 1)};
  std::vector<uint8_t> states(n);
  std::vector<uint32_t> work(n);
  std::vector<PageIndexEntry> index_memory(PageIndexCapacity(objs.data(), n));
  const PageIndex index = BuildPageIndex(objs.data(), n, index_memory.data(), index_memory.size());
  ASSERT_NE(index.entries, nullptr);
  for (const PageIndex* ix : {static_cast<const PageIndex*>(nullptr), &index}) {
    FloodStats stats;
    root = objs[slot(0)].start;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(Flood(objs.data(), n, &r, 1, {}, states.data(), work.data(), &stats, ix));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(stats.reachable_objects, n);
    EXPECT_LT(secs, 20.0);  // sanity only (shared CI machines); tests/bench/heapcheck measures
    // Cut the root: everything leaks, one direct (the root), the rest indirect.
    root = 0;
    ASSERT_TRUE(Flood(objs.data(), n, &r, 1, {}, states.data(), work.data(), &stats, ix));
    EXPECT_EQ(stats.leaked_direct, 1u);
    EXPECT_EQ(stats.leaked_indirect, n - 1);
    std::printf("flood of %zu objects (%s page index): %.3f s\n", n, ix ? "with" : "without", secs);
  }
}

}  // namespace
}  // namespace heapkit::check
