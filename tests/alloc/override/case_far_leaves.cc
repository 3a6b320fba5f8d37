// Objects outside the page map's hot leaf. The free fast path looks up pointers
// of the hot leaf (the 8 GiB of address space the heap started in) with one
// load and takes a second path for every other pointer (alloc/page_map.h). Here
// untouched 1 GiB blocks push the heap's low end out of that leaf, and small
// objects are carved beyond it: their frees must recycle, keep their neighbours
// intact and catch invalid pointers exactly like the hot leaf's.
#include <malloc.h>
#include <stdint.h>

#include <cstdlib>
#include <vector>

#include "probe.h"

namespace heapkit::probe {
namespace {

constexpr int kLeafShift = 13 + 20;  // page shift + leaf bits (alloc/page_map.h)
constexpr size_t kBlock = size_t{1} << 30;

uintptr_t LeafOf(const void* p) { return reinterpret_cast<uintptr_t>(p) >> kLeafShift; }

}  // namespace

PROBE_CASE(objects_beyond_first_leaf) {
  if (!ExpectHeapkit()) Skip("heapkit's page-map layout");
  void* first = malloc(64);
  const uintptr_t hot = LeafOf(first);
  // Untouched blocks until one lies in another leaf (at most 8 GiB + 1 away);
  // all but that one stay allocated, so it is the only large free span
  // afterwards.
  std::vector<void*> blocks;
  void* far_block = nullptr;
  while (far_block == nullptr && blocks.size() < 12) {
    void* b = malloc(kBlock);
    if (b == nullptr) Skip("cannot map 1 GiB blocks here");
    if (LeafOf(b) != hot && LeafOf(static_cast<char*>(b) + kBlock - 1) != hot) {
      far_block = b;
    } else {
      blocks.push_back(b);
    }
  }
  PROBE_CHECK_MSG(far_block != nullptr, "12 GiB of blocks never left leaf 0x%lx",
                  static_cast<unsigned long>(hot));
  free(far_block);
  // Small objects: the first ones use up what is left near the start of the
  // heap, then spans come out of the far block.
  struct Object {
    char* p;
    size_t size;
  };
  std::vector<Object> objects, far;
  for (int i = 0; i < 4000 && far.size() < 200; ++i) {
    const size_t size = i % 2 == 0 ? size_t{200} << 10 : 48 + size_t(i % 7) * 16;
    char* p = static_cast<char*>(malloc(size));
    PROBE_CHECK(p != nullptr);
    FillPattern(p, size, reinterpret_cast<uintptr_t>(p));
    objects.push_back({p, size});
    if (LeafOf(p) != hot) far.push_back({p, size});
  }
  printf("hot leaf 0x%lx, %zu blocks kept, %zu of %zu objects beyond it\n",
         static_cast<unsigned long>(hot), blocks.size(), far.size(), objects.size());
  PROBE_CHECK_MSG(far.size() >= 100, "only %zu objects beyond the hot leaf", far.size());
  for (const Object& o : far) {
    PROBE_CHECK(malloc_usable_size(o.p) >= o.size);
    // The thread cache takes the freed object back: the same size gets it
    // again.
    free(o.p);
    void* again = malloc(o.size);
    PROBE_CHECK_MSG(again == o.p, "freed %p (%zu B), malloc gave %p", static_cast<void*>(o.p),
                    o.size, again);
    FillPattern(o.p, o.size, reinterpret_cast<uintptr_t>(o.p));
  }
  // Invalid frees beyond the hot leaf are caught like any other.
  char* victim = far.back().p;
  ExpectFreeDeath(
      "free(interior of an object beyond the hot leaf)", [](void* p) { free(p); }, victim + 16,
      reinterpret_cast<uintptr_t>(victim + 16));
  ExpectFreeDeath(
      "double free beyond the hot leaf",
      [](void* p) {
        free(p);
        free(p);
      },
      victim, reinterpret_cast<uintptr_t>(victim));
  for (const Object& o : objects) {
    PROBE_CHECK_MSG(FindPatternMismatch(o.p, o.size, reinterpret_cast<uintptr_t>(o.p)) == o.size,
                    "object %p (%zu B) corrupted", static_cast<void*>(o.p), o.size);
  }
  for (const Object& o : objects) free(o.p);
  for (void* b : blocks) free(b);
  free(first);
}

}  // namespace heapkit::probe
