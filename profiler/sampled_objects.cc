// heapcheck/'s queries over the stack table (sampled_objects.h).
#include "profiler/sampled_objects.h"

#include "profiler/stack_table.h"

namespace heapkit::prof {
namespace {

// A found record's answer: its stack and requested size, each if asked for.
void Answer(const Bucket& b, size_t size, AllocationStack* stack, size_t* requested_size) {
  if (stack != nullptr)
    *stack = {b.id.load(std::memory_order_relaxed), b.depth, GlobalStackTable().LeafFrame(b)};
  if (requested_size != nullptr) *requested_size = size;
}

}  // namespace

int ReadAllocationStack(const AllocationStack& stack, void** out, int max) {
  const Bucket* b = GlobalStackTable().BucketById(stack.id);
  return b != nullptr ? GlobalStackTable().ReadStack(*b, out, max) : 0;
}

bool DecodeAllocationSlot(uint64_t slot, AllocationStack* stack, size_t* requested_size) {
  Bucket* b;
  size_t size;
  if (!GlobalStackTable().DecodeSlot(slot, &b, &size)) return false;
  Answer(*b, size, stack, requested_size);
  return true;
}

size_t RecordedLiveObjects() { return GlobalStackTable().num_live_objects(); }

bool LookupAllocationStack(const void* object, AllocationStack* stack, size_t* requested_size) {
  Bucket* b;
  size_t size;
  if (!GlobalStackTable().Lookup(object, &b, &size)) return false;
  Answer(*b, size, stack, requested_size);
  return true;
}

}  // namespace heapkit::prof
