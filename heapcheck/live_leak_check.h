// A whole-program leak check while the program runs on (the HTTP endpoint's /debug/pprof/leaks):
// the exit check's machinery (leak_check.h: stop the threads, snapshot, flood, resume) run from
// the calling thread, its result written as a heap profile of the unreachable objects instead
// of a report. Nothing is printed, no .heap file is written, the exit check is unchanged.
//
// In two halves (LeakCheckRun's), so that the server's one thread serves other clients while
// the forked copy floods: BeginLiveLeakCheck decides the admission, stops the threads, forks
// and resumes them, and returns the copy's pipe; the server polls it with its clients and calls
// EndLiveLeakCheck when it is readable or hung up (or at answer->wait_ms at the latest), which
// collects the result and writes the profile. The gate stays held in between, by that thread.
//
// The profile: the legacy text ("heap profile: N: B [ N: B] @ heapprofile", exact counts; one
// line per allocation stack, direct and indirect leaks together; requested sizes), then
// MAPPED_LIBRARIES with /proc/self/maps, so that every reader of heap dumps reads it.
// Objects the exit check would leave out are left out here too: unrecorded ones (roots),
// ignored ones (IgnoreObject), and in minimal mode those live when main() started.
// HEAPCHECK_SUPPRESSIONS are not applied: they match symbolized frames, which is the reader's
// business here.
//
// Admission (the endpoint's policy; README.md, "One check at a time"):
//   - one check at a time: the live check only tries the check gate (check_gate.h, a few ms at
//     most); while another check runs (the program's own, or a live one) it answers kBusy;
//   - spacing: a live check may start only at LiveCheckNextStart() after the last one ended:
//     the last end + max(HEAP_CHECK_LIVE_MIN_INTERVAL_MS, kLiveCheckSpacing x the last check's
//     duration). Checks then take at most 1 / (1 + kLiveCheckSpacing) = 5 % of wall time
//     whatever the heap's size, so a client asking back to back costs the program at most that
//     share of its threads' time. The duration, not only the pause: it bounds the work the
//     check does while the program runs on (the flood, the profile's text) as well as the
//     stop. Earlier: kTooSoon, with the last check's time and totals (its profile is not kept:
//     memory held for a client, and a stale profile read as a new one).
// The caller must not hold allocator or profiler locks, and its own allocations should be
// unrecorded (they are then roots, never leaks).
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/http/server_hooks.h"

namespace heapkit::check {

using LeakProfileSink = void (*)(void* ctx, const char* data, size_t length);
using prof::http::LeakCheckAnswer;

inline constexpr int64_t kLiveCheckSpacing = 19;

// When (CLOCK_MONOTONIC nanoseconds) the next live check may start, the last having ended at
// last_end after last_duration.
inline int64_t LiveCheckNextStart(int64_t last_end, int64_t last_duration, int64_t min_interval) {
  const int64_t spacing = kLiveCheckSpacing * last_duration;
  return last_end + (spacing > min_interval ? spacing : min_interval);
}

// The live check's first half, if admitted. answer->status kPending: admitted and begun; call
// EndLiveLeakCheck on this thread once the returned descriptor is readable or hung up (-1: at
// once), within answer->wait_ms. Any other status is the whole answer (server_hooks.h).
int BeginLiveLeakCheck(LeakCheckAnswer* answer);

// The second half: the profile to sink, the check's figures in *answer (kChecked or kFailed).
void EndLiveLeakCheck(LeakProfileSink sink, void* ctx, LeakCheckAnswer* answer);

}  // namespace heapkit::check
