// How a profile.proto builder (profile_builder.h) asks for a location's source frames: a plain
// function pointer, so that the runtime's builder and the HTTP endpoint's symbolizer (in the
// on-demand library, http/server_hooks.h) share only this header.
#pragma once

#include <cstdint>

namespace heapkit::prof {

// One source frame of a location (pointers valid until the namer's next call).
struct ProfileFrame {
  const char* function;     // demangled
  const char* system_name;  // mangled (linkage) name; nullptr: the function's
  const char* file;
  int64_t line;
  int64_t start_line;
};

// Writes up to `max` frames of `address` (a call instruction), innermost first, and returns
// how many; 0 when nothing names it.
struct LocationNamer {
  int (*name)(void* ctx, uint64_t address, ProfileFrame* frames, int max);
  void* ctx;
};

}  // namespace heapkit::prof
