// HEAPPROFILESIGNAL: the dump signal's handler.
//
// Invariant: the handler only writes one byte to the helper thread's pipe
// (WakeHelperFromSignal, async-signal-safe); the helper thread dumps. A signal that already has
// a handler or disposition is never replaced.
#pragma once

namespace heapkit::prof {

// Installs the handler for the profiler state's config.dump_signal (profiler_state.h) if set
// and free; otherwise says why in one line and clears it (signal dumps off).
void InstallDumpSignal();

}  // namespace heapkit::prof
