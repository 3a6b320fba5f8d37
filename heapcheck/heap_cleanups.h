// The functions registered with REGISTER_HEAPCHECK_CLEANUP (<gperftools/heap-checker.h>,
// HeapCleaner): a fixed table under a spin lock (registration runs in static constructors, so
// it allocates nothing), run once, just before the whole-program check.
#pragma once

namespace heapkit::check {

// False (with one line) when the table is full: the cleanup is ignored.
bool RegisterHeapCleanup(void (*cleanup)());

// Runs the registered cleanups, the first time only (the exit, signal and NoGlobalLeaks checks).
void RunHeapCleanupsOnce();

}  // namespace heapkit::check
