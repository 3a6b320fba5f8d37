// Root regions: memory the flood scans for pointers into the heap.
//
//  - globals: every writable PT_LOAD segment (data, bss, relro) of every loaded object, listed
//    with dl_iterate_phdr BEFORE the world is stopped (it takes the loader lock, which a stopped
//    thread may hold) — except those of the runtime's own shared object (libheapkit.so): its
//    globals are allocator and checker bookkeeping, never the program's data, and a word there
//    that happens to equal a heap address (an arena's end is the next mapping's start) would
//    hide a leak. (Linked statically, the runtime's globals are part of the program's segment
//    and are scanned; its bookkeeping therefore holds no one-past-the-end pointers.)
//  - per thread: the live stack from the saved stack pointer (minus the 128-byte red zone for
//    interrupted threads) up to the top of the stack, its saved registers, its static TLS block
//    and struct pthread (pthread_setspecific values), and its DTV (dynamic TLS blocks are heap
//    objects reachable from the DTV). For glibc threads the stack top is the thread's TCB, so a
//    scan never runs into an unrelated mapping the kernel merged above the stack.
//  - the checking thread: from the stack pointer of the check's entry frame (atexit handler or
//    API call) upwards, never the dead frames below it; its callee-saved registers.
// Every region is clamped to readable mappings of /proc/self/maps.
//
// The program's anonymous memory is added by anonymous_roots.h. Never scanned: the runtime's own
// mappings (page heap, metadata arena, the profiler's table, the checker's snapshot), stacks of
// threads that exited (gone from /proc/self/task; their cached stacks left out by
// anonymous_roots.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/flood.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/proc_maps.h"

namespace heapkit::check {

struct LoadedModules {
  MmapArray<Region> writable;     // writable PT_LOAD segments of every object
  MmapArray<Region> loader_text;  // executable segments of the dynamic loader (ld.so)
  MmapArray<Region> segments;     // every PT_LOAD segment of every object, the runtime's too
};

// dl_iterate_phdr walk; call with the world running. False on out-of-memory.
// runtime_code: an address of the runtime's code; the writable segments of the shared object
// that holds it are left out (not those of the main program).
bool CollectModules(LoadedModules* modules, uintptr_t runtime_code);
bool CollectModules(LoadedModules* modules);  // runtime_code: this function's address

// Resolves glibc's static TLS size and sizeof(struct pthread) (dlsym: call at start-up).
void InitThreadLayout();

// Adds the stack, TLS and DTV regions of one thread. `interrupted`: sp was saved by the signal
// handler (the red zone below it is live). `main_thread`: its own stack is the [stack] mapping.
//
// A thread's own stack is the [stack] mapping (main thread), or what lies below its TCB in the
// heap block or mapping that holds its thread pointer (glibc puts struct pthread at the top of
// every thread stack, its own or one given with pthread_attr_setstack). When SP is inside it,
// [SP, top) is scanned. When SP is elsewhere — swapcontext onto a coroutine stack, a signal
// handler on a sigaltstack — the whole own stack is scanned (where the thread left it is not
// known), and the region holding SP is scanned from SP to its end. Heap blocks used as stacks
// (either kind) are appended to *stack_blocks: they are live while the thread runs on them,
// but only their part above SP is live data (their objects get kLiveObject, not kRootObject).
//
// The stacks in mappings (not heap blocks) are appended to *stacks when it is given, for
// anonymous_roots.h to leave out: the thread's own stack up to the end of struct pthread (its
// dead part below SP is never a root), and of another region holding SP the part scanned from
// SP (below it may lie the stacks of other coroutines carved from the same mapping).
//
// kStackNotMapped: no mapping holds the thread's SP or its own stack (the maps were read before
// the thread started, or the values are wrong): none of its stack was added, and the caller
// must say so, since what only that stack points to would be reported as leaked.
enum class ThreadRegions { kAdded, kStackNotMapped, kOutOfMemory };
ThreadRegions AddThreadRegions(const ProcMaps& maps, uintptr_t sp, uintptr_t thread_pointer,
                               bool interrupted, bool main_thread, MmapArray<Region>* out,
                               MmapArray<uintptr_t>* stack_blocks,
                               MmapArray<Region>* stacks = nullptr);

// True when the top of the readable range [start, end) holds a glibc thread control block
// (header.tcb == header.self == its own address, within sizeof(struct pthread) + 4 KiB of the
// end): a thread stack, a live thread's or one glibc caches for a thread that exited.
bool TopHoldsThreadControlBlock(uintptr_t start, uintptr_t end);

// The current thread pointer (%fs base on x86-64).
uintptr_t CurrentThreadPointer();

}  // namespace heapkit::check
