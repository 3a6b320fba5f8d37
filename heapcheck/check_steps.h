// The analysis of one check over a frozen address space: snapshot of the live heap, records,
// roots, flood, leak records (README.md, "What is a leak").
//
// "Frozen" is either the process itself with every other thread stopped (the stop-the-world
// check), or the forked copy of it (snapshot_fork.h), where those threads do not exist and
// their stacks, TLS and the stopper's saved registers are memory like any other. Nothing here
// asks the kernel who is running: the process id, the checking thread's id and thread pointer
// come in CheckingThread, taken in the process the check was asked in (in the copy getpid() is
// the copy's, which would make the checking thread look like the main thread).
//
// Everything between PrepareCheck and the end of AnalyzeFrozenProcess is malloc-free and takes
// no lock a stopped thread may hold (the allocator's enumeration and the profiler's lookup are
// stopped-world safe by contract); memory comes from mmap (MmapArray). Not reentrant: one
// check at a time (the scratch arrays are shared, kept between checks).
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "heapcheck/leak_check.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/thread_stopper.h"

namespace heapkit::check {

// The thread that runs the check, as the process it runs in sees it.
struct CheckingThread {
  pid_t pid;                 // the process (== the main thread's tid)
  pid_t tid;                 // the checking thread
  uintptr_t thread_pointer;  // its %fs base
  uintptr_t entry_sp;        // the check's entry frame: its stack is scanned from here up
  const uintptr_t* regs;     // its callee-saved registers at entry
  int reg_count;
};

// World running: what takes locks or may allocate inside libc (the loaded modules, the ignore
// list). `populate`: size the snapshot arrays from the profiler's count and fault them in now
// (the stop-the-world check: fewer faults while stopped); for a forked snapshot they are only
// reserved, so the fork copies no page-table entry for them and the copy faults in its own.
// False (said in one line) if the check cannot be done.
bool PrepareCheck(bool populate);

// The address space frozen (other threads stopped, or this is the forked copy): the whole
// analysis into *out (its leak records, pcs and figures; not its thread counts, which are the
// stopper's). False (said in one line) if it could not be done.
bool AnalyzeFrozenProcess(const CheckConfig& config, const CheckingThread& self,
                          const ThreadStopper& stopper, const MmapArray<uintptr_t>* baseline,
                          CheckResult* out);

// Every other thread stopped: lists the live heap objects (false: out of memory).
bool ListLiveObjects();
// World running again: the start addresses of the objects ListLiveObjects listed, sorted.
bool CopyListedObjectStarts(MmapArray<uintptr_t>* out);

}  // namespace heapkit::check
