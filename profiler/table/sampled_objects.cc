// heapcheck/'s queries over the stack table (sampled_objects.h).
#include "profiler/table/sampled_objects.h"

#include "profiler/table/stack_table.h"

namespace heapkit::prof {
namespace {

// A found record's answer: its stack and requested size, each if asked for.
void Answer(StackRef ref, size_t size, AllocationStack* stack, size_t* requested_size) {
  if (stack != nullptr) *stack = {ref.node, ref.leaf, GlobalStackTable().LeafFrame(ref)};
  if (requested_size != nullptr) *requested_size = size;
}

}  // namespace

int ReadAllocationStack(const AllocationStack& stack, void** out, int max) {
  return GlobalStackTable().ReadStack(StackRef{stack.node, stack.leaf_index}, out, max);
}

bool DecodeAllocationSlot(uint64_t slot, AllocationStack* stack, size_t* requested_size) {
  StackRef ref;
  size_t size;
  if (!GlobalStackTable().DecodeSlot(slot, &ref, &size)) return false;
  Answer(ref, size, stack, requested_size);
  return true;
}

size_t RecordedLiveObjects() { return GlobalStackTable().num_live_objects(); }

bool LookupAllocationStack(const void* object, AllocationStack* stack, size_t* requested_size) {
  StackRef ref;
  size_t size;
  if (!GlobalStackTable().Lookup(object, &ref, &size)) return false;
  Answer(ref, size, stack, requested_size);
  return true;
}

}  // namespace heapkit::prof
