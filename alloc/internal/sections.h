// Where code and variables that every process touches are placed, so that a program that
// neither profiles nor checks leaks keeps as few pages resident as possible (alloc/README.md,
// "Memory of small processes"). A building block of its own, so that the malloc-free internals
// (arena, env) use it without reaching up into the allocator's headers.
#pragma once

// Profiler and checker code that every process runs, whatever is enabled (start-up, exit, the
// heap-growth record and its stack capture), and the allocator's start-up setters: placed in
// .text.startup, which the linker puts before all other text, where the entry points and the
// allocator's hot objects follow (link order, alloc/CMakeLists.txt). The code a program executes
// when it neither profiles nor checks leaks is then contiguous, and the kernel's fault-around
// (64 KiB windows, at a phase that depends on the load address) maps as little of the rest of
// the profiler and checker as possible.
#define HEAPKIT_ALWAYS_RUN_CODE __attribute__((section(".text.startup")))
// Variables every process writes whatever is enabled, at start-up (the hooks the profiler
// installs, once-flags, the real main) or at its first allocations (the metadata arena's
// cursor, the heap-growth records, the allocator-frame ranges): kept in .data, whose pages the
// dynamic linker has already written (relocations, the zeroed start of .bss), instead of
// zero-initialised .bss, where each would make its own page resident. For zero-initialised
// variables only.
#define HEAPKIT_ALWAYS_WRITTEN_DATA __attribute__((section(".data")))
