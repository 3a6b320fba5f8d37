// Allocator frames for a static link, from the executable's own symbol table.
//
// When libheapkit.a is linked into the program, the runtime's code shares the executable's
// text with the user's, so code ranges cannot tell them apart. At start-up we map
// /proc/self/exe (open + mmap: malloc-free), walk .symtab (falling back to .dynsym) and keep
// the [start, end) range of every STT_FUNC symbol that belongs to the runtime:
//   - anything in namespace heapkit (`_ZN7heapkit...`, local statics/lambdas `_ZZN7heapkit...`,
//     including GCC clones such as `.part.0`, `.cold`, `.constprop.0`);
//   - the C entry points heapkit defines (malloc, free, calloc, realloc, ..., `__libc_*`,
//     `tc_*`, `heapkit_*`) and operator new/delete (`_Znwm*`, `_Znam*`, `_ZdlPv*`, `_ZdaPv*`).
// Ranges are shifted by the executable's load bias, sorted, merged and stored in anonymous
// mmap'ed memory; lookups are a binary search, lock-free after start-up.
// A stripped binary has no .symtab: .dynsym then only names the exported entry points (not the
// internal slow-path functions), so the caller adds calibration on top (see sample_recorder.cc).
#pragma once

#include <cstdint>

namespace heapkit::prof {

// Loads the ranges from `path` (normally "/proc/self/exe") with load bias `bias`. Returns the
// number of merged ranges (0 if the file has no usable symbol table). Start-up only; a second
// successful call replaces nothing (the first result stays).
int LoadRuntimeSymbolRanges(const char* path, uintptr_t bias);

// Number of ranges loaded (0 before loading or for a stripped binary).
int NumRuntimeSymbolRanges();

// True if the ranges came from .symtab (complete), false if from .dynsym or none.
bool RuntimeSymbolsFromSymtab();

// True if the return address `pc` lies in a runtime function (checks pc-1, so a call that is
// the last instruction of a function is attributed to that function).
bool InRuntimeSymbolRange(uintptr_t pc);

// True if `name` is a symbol of the runtime by the rules above (exposed for the unit test).
bool IsRuntimeSymbolName(const char* name);

}  // namespace heapkit::prof
