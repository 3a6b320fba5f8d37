// Whether the calling thread's sampled allocations are recorded: one initial-exec thread-local
// flag (reading it never allocates), read by the recorder (sample_recorder.h) on every sampled
// allocation and by the heap growth stacks (growth_stacks.h) on every growth, and set by
// whoever must keep its own allocations out of the profiles (HeapLeakChecker::Disabler, the
// profiler's helper thread while it is created, the HTTP endpoint's thread). Frees of recorded
// objects are accounted whatever the flag says.
#pragma once

namespace heapkit::prof {

extern __thread bool tls_recording_disabled __attribute__((tls_model("initial-exec")));

// Stops (true) or resumes (false) recording the calling thread's sampled allocations (for
// HeapLeakChecker::Disabler). Not nested: the caller keeps its own depth count.
// Async-signal-safe.
void SetThreadRecordingDisabled(bool disabled);

}  // namespace heapkit::prof
