// A whole-program leak check while the program runs on (the HTTP endpoint's /debug/pprof/leaks):
// the exit check's machinery (leak_check.h: stop the threads, snapshot, flood, resume) run from
// the calling thread, its result written as a heap profile of the unreachable objects instead
// of a report. Nothing is printed, no .heap file is written, the exit check is unchanged.
//
// The profile: the legacy text ("heap profile: N: B [ N: B] @ heapprofile", exact counts; one
// line per allocation stack, direct and indirect leaks together; requested sizes), then
// MAPPED_LIBRARIES with /proc/self/maps, so that every reader of heap dumps reads it.
// Objects the exit check would leave out are left out here too: unrecorded ones (roots),
// ignored ones (IgnoreObject), and in minimal mode those live when main() started.
// HEAPCHECK_SUPPRESSIONS are not applied: they match symbolized frames, which is the reader's
// business here.
//
// One live check at a time (a lock); the caller must not hold allocator or profiler locks, and
// its own allocations should be unrecorded (they are then roots, never leaks). The check's
// scratch memory is leak_check.cc's, shared with the exit check and HeapLeakChecker's named
// checks, which do not take this lock: a live check must not overlap one of those (a program
// that runs named checks while it is scraped is not supported yet).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::check {

using LeakProfileSink = void (*)(void* ctx, const char* data, size_t length);

// 1: checked, profile written; 0: HEAPCHECK is off (nothing written); -1: the check could not
// run (threads not listable, out of memory; nothing written). *bytes / *objects: leaked totals.
int WriteLeakProfileNow(LeakProfileSink sink, void* ctx, uint64_t* bytes, uint64_t* objects);

}  // namespace heapkit::check
