// HEAPPROFILESIGNAL: the dump signal's handler.
//
// Invariant: the handler only writes one byte to the helper thread's pipe
// (WakeHelperFromSignal, async-signal-safe); the helper thread dumps. A signal that already has
// a handler or disposition is never replaced.
#pragma once

namespace heapkit::prof {

// Installs the handler for g_config.dump_signal if set and free; otherwise says why in one line
// and clears g_config.dump_signal (signal dumps off).
void InstallDumpSignal();

}  // namespace heapkit::prof
