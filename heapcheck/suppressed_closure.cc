#include "heapcheck/suppressed_closure.h"

#include "heapcheck/mmap_array.h"

namespace heapkit::check {
namespace {

// states[i] = kReachable for every object reachable from the objects flagged kRootObject.
bool FloodFrom(const MmapArray<HeapObject>& objects, const FloodOptions& options,
               MmapArray<uint32_t>* work, MmapArray<uint8_t>* states) {
  return Flood(objects.data(), objects.size(), nullptr, 0, options, states->data(), work->data(),
               nullptr);
}

}  // namespace

bool FindLeaksOwnedBySuppressed(const LeakRecord* leaks, size_t n, const uint8_t* suppressed,
                                const FloodOptions& options, uint8_t* hidden) {
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    hidden[i] = 0;
    any = any || suppressed[i];
  }
  if (!any) return true;
  MmapArray<HeapObject> objects;
  MmapArray<uint32_t> work;
  MmapArray<uint8_t> from_suppressed, from_reported;
  if (!objects.Resize(n) || !work.Resize(n) || !from_suppressed.Resize(n) ||
      !from_reported.Resize(n))
    return false;
  for (size_t i = 0; i < n; ++i) {
    objects[i] = HeapObject{leaks[i].address, static_cast<size_t>(leaks[i].bytes),
                            suppressed[i] ? kRootObject : 0u, 0};
  }
  if (!FloodFrom(objects, options, &work, &from_suppressed)) return false;
  for (size_t i = 0; i < n; ++i) {
    objects[i].flags = !suppressed[i] && leaks[i].state == kLeakedDirect ? kRootObject : 0u;
  }
  if (!FloodFrom(objects, options, &work, &from_reported)) return false;
  for (size_t i = 0; i < n; ++i) {
    hidden[i] =
        !suppressed[i] && from_suppressed[i] == kReachable && from_reported[i] != kReachable;
  }
  return true;
}

}  // namespace heapkit::check
