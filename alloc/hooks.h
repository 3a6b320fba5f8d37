// Hooks through which profiler/ and heapcheck/ extend the allocator (all optional).
//
//   SetStackCaptureHook      used for TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD reports; without a
//                            hook (minimal library) the report has no stack.
//   SetHeapGrowthHook        told of every page-heap growth, on the growing thread (heap_growth.h)
//   SetHeapSampleProvider    fills MallocExtension::GetHeapSample / GetHeapGrowthStacks; without
//                            a provider they produce an empty string.
// Setters are thread-safe; the pointed-to objects must stay valid while registered.
#pragma once

#include <cstddef>

namespace heapkit::alloc {

// Fills pcs with up to max_depth return addresses (innermost first) after skipping `skip`
// frames; returns how many. Must be malloc-free and re-entrancy-safe.
using StackCaptureHook = int (*)(void** pcs, int max_depth, int skip);
void SetStackCaptureHook(StackCaptureHook hook);
StackCaptureHook GetStackCaptureHook();

// Called after the calling thread's allocation made the page heap grow by `bytes` (from the OS),
// with no allocator lock held; it may capture the stack. Must be malloc-free.
using HeapGrowthHook = void (*)(size_t bytes);
void SetHeapGrowthHook(HeapGrowthHook hook);

// Appends text to an opaque sink (a std::string inside MallocExtension).
using TextSink = void (*)(void* sink_context, const char* data, size_t length);

struct HeapSampleProvider {
  // Writes a heap profile (legacy text format) of the currently sampled live objects.
  void (*heap_sample)(TextSink sink, void* sink_context);
  // Writes the stacks that grew the heap (may be nullptr: empty output).
  void (*heap_growth_stacks)(TextSink sink, void* sink_context);
};
void SetHeapSampleProvider(const HeapSampleProvider* provider);
const HeapSampleProvider* GetHeapSampleProvider();

}  // namespace heapkit::alloc
