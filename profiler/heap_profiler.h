// HEAPPROFILE: starting, stopping and dumping profiles — the API behind
// <gperftools/heap-profiler.h>. See README.md for the environment variables.
//
// Where the rest lives, each file stating its own invariants: the state object, its lock and
// fields (profiler_state.h), the dumps and their triggers (dump_triggers.h), the settings
// (profiler_config.h), recording sampled allocations (sample_recorder.h), the helper thread
// (profiler_thread.h), the dump signal (profiler_signals.h), fork (profiler_fork.h), start-up
// (startup.cc).
#pragma once

namespace heapkit::prof {

bool StartHeapProfiling(const char* prefix);
void StopHeapProfiling();
bool HeapProfilingOn();
// Dumps now (API HeapProfilerDump). False if profiling is off or the dump failed.
bool DumpHeapProfileNow(const char* reason);

// main() is starting (heapcheck/startup.cc's main wrapper, every process): a profile started
// before main gets its exit dump registered now, so it runs at exit() before the destructors of
// globals built before main, which would otherwise have freed what the program held.
void OnMainStart();

}  // namespace heapkit::prof
