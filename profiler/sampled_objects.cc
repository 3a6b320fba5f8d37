// heapcheck/'s queries over the stack table (sampled_objects.h).
#include "profiler/sampled_objects.h"

#include "profiler/stack_table.h"

namespace heapkit::prof {
namespace {

// A found record's answer: its stack and requested size, each if asked for.
void Answer(uint32_t node, size_t size, AllocationStack* stack, size_t* requested_size) {
  if (stack != nullptr) *stack = {node, GlobalStackTable().LeafFrame(node)};
  if (requested_size != nullptr) *requested_size = size;
}

}  // namespace

int ReadAllocationStack(const AllocationStack& stack, void** out, int max) {
  return GlobalStackTable().ReadStack(stack.node, out, max);
}

bool DecodeAllocationSlot(uint64_t slot, AllocationStack* stack, size_t* requested_size) {
  uint32_t node;
  size_t size;
  if (!GlobalStackTable().DecodeSlot(slot, &node, &size)) return false;
  Answer(node, size, stack, requested_size);
  return true;
}

size_t RecordedLiveObjects() { return GlobalStackTable().num_live_objects(); }

bool LookupAllocationStack(const void* object, AllocationStack* stack, size_t* requested_size) {
  uint32_t node;
  size_t size;
  if (!GlobalStackTable().Lookup(object, &node, &size)) return false;
  Answer(node, size, stack, requested_size);
  return true;
}

}  // namespace heapkit::prof
