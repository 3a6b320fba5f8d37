// The reachability flood: a pure function over a snapshot of the heap, unit-tested on
// synthetic heaps (tests/heapcheck/unit/flood_test.cc).
//
// Input: live heap objects sorted by start address (non-overlapping), root regions (memory that
// is scanned for pointers: globals, stacks, registers, TLS), and options. Output: one state per
// object. Nothing here reads anything but the given objects and regions, allocates, locks or
// logs, so it runs while the world is stopped and is unit-tested on synthetic heaps.
//
// Pointer rule: a word W found at an address that is a multiple of `source_alignment` points to
// object O = [start, start + extent) if start <= W < start + extent and W - start <= max offset
// (max_pointer_offset < 0: any interior pointer). extent = max(size, 1), so a pointer to a
// zero-size object counts.
//
// Phase 1 marks everything reachable from the roots and from objects flagged kRootObject
// (IgnoreObject, Disabler, unrecorded objects). Phase 2 classifies the rest: an unreachable
// object is an indirect leak if another leaked object points to it, otherwise a direct leak. In an
// unreachable cycle with no outside referrer exactly one member (the lowest address) is direct.
// Both phases are iterative over a caller-provided work stack of `object_count` entries: every
// object is pushed at most once per phase. Cost: O(bytes scanned * log(objects)).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::check {

enum ObjectState : uint8_t {
  kUnvisited = 0,
  kReachable = 1,
  kLeakedDirect = 2,
  kLeakedIndirect = 3,
};

enum ObjectFlags : uint32_t {
  kRootObject = 1u << 0,  // treat as live and scan it (ignored / disabled / unrecorded objects)
  kLiveObject = 1u << 1,  // live but not scanned: a thread's stack, whose live part is a root
};

// 16 bytes: a snapshot holds one per live object (a million objects: 16 MB).
struct HeapObject {
  uintptr_t start;
  uint64_t size : 48;  // bytes scanned for pointers and the extent pointers may hit (< 2^48:
                       // the user address space)
  uint64_t flags : 8;  // ObjectFlags
  uint64_t aux : 8;    // free for the caller (e.g. a mark while the snapshot is built)
};
static_assert(sizeof(HeapObject) == 16, "a snapshot holds one per live object");

struct Region {
  uintptr_t start;
  uintptr_t end;  // exclusive
};

struct FloodOptions {
  int64_t max_pointer_offset = 1024;        // gperftools' default; -1 = any interior pointer
  size_t source_alignment = sizeof(void*);  // 1, 2, 4 or 8
  // Memory that must not be read (PROT_NONE pages a program put inside its heap blocks, holes
  // it unmapped): sorted, non-overlapping. Parts of objects inside them are not scanned.
  const Region* unreadable = nullptr;
  size_t unreadable_count = 0;
};

struct FloodStats {
  size_t reachable_objects = 0;
  size_t leaked_direct = 0;
  size_t leaked_indirect = 0;
  size_t words_scanned = 0;
  size_t unreadable_ranges_skipped = 0;  // object parts left unscanned (FloodOptions::unreadable)
  size_t unreadable_bytes_skipped = 0;
};

// Optional page directory that makes each pointer lookup a hash probe plus a search among the
// objects starting in one 4 KiB page, instead of a binary search over all objects (which
// misses the cache at every level for a million objects). Built over caller memory:
// PageIndexCapacity entries, then BuildPageIndex. Words whose page starts no object (interior
// pages of big objects, gaps) fall back to the full search, so results never change.
struct PageIndexEntry {
  uintptr_t page;  // address >> 12; 0 = empty
  uint32_t lo;     // objects[lo..hi) may contain an address of the page (lo: the predecessor)
  uint32_t hi;
};
struct PageIndex {
  const PageIndexEntry* entries = nullptr;
  size_t mask = 0;  // capacity - 1 (a power of two)
};
size_t PageIndexCapacity(const HeapObject* objects, size_t object_count);
// memory: zeroed, `capacity` entries (from PageIndexCapacity). objects sorted as for Flood.
PageIndex BuildPageIndex(const HeapObject* objects, size_t object_count, PageIndexEntry* memory,
                         size_t capacity);

// states[i] receives the ObjectState of objects[i]; work_stack must hold object_count entries.
// Returns false only if the input is not sorted/non-overlapping (nothing is written then).
// index: optional (BuildPageIndex over the same objects).
bool Flood(const HeapObject* objects, size_t object_count, const Region* roots, size_t root_count,
           const FloodOptions& options, uint8_t* states, uint32_t* work_stack, FloodStats* stats,
           const PageIndex* index = nullptr);

// Index of the object `address` points into under the pointer rule, or -1. Exposed for tests
// and for IgnoreObject bookkeeping.
int64_t FindObject(const HeapObject* objects, size_t object_count, uintptr_t address,
                   int64_t max_pointer_offset);

}  // namespace heapkit::check
