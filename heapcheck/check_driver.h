// HEAPCHECK's start-up, "run one check and report it", and the exit and signal checks. The
// settings and their parsing are in checker_config.h.

#pragma once

#include <sys/types.h>

#include <cstdint>

#include "heapcheck/checker_config.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/report.h"

namespace heapkit::check {

// Parses the environment once (idempotent); starts allocation recording if a mode is active.
void InitCheckerFromEnvironment();
Settings& CheckerSettings();
bool CheckerActive();

// Runs one check and its report. baseline: objects excluded (named checks), may be null.
// Returns true if nothing was reported; *bytes/*objects receive the reported totals.
bool CheckAndReport(const char* name, uintptr_t entry_sp, const uintptr_t* regs, int reg_count,
                    const MmapArray<uintptr_t>* baseline, uint64_t* bytes, uint64_t* objects);

// The whole-program check at exit: runs the cleanups, checks, and on leaks flushes stdio and
// _exit()s with the configured status. `late`: called after global destructors.
void RunExitCheck(bool late, uintptr_t entry_sp, const uintptr_t* regs, int reg_count);

// The whole-program check at _exit/_Exit (underscore_exit.h): like the exit check, but it
// neither flushes stdio nor exits. True if nothing was reported (the caller leaves with the
// program's status, else with HEAP_CHECK_ERROR_EXIT_CODE).
bool RunUnderscoreExitCheck(uintptr_t entry_sp, const uintptr_t* regs, int reg_count);

// The whole-program check at a signal (signal_check.h): like the exit check, from the calling
// thread, without exiting (the caller then dies by the signal).
void RunSignalCheck(uintptr_t entry_sp, const uintptr_t* regs, int reg_count);

// Called when main() starts (startup.cc). minimal mode: notes the objects live now, so the
// exit check reports only objects allocated after main started — decided by when each object
// was allocated, not by whether main() is on its recorded stack (a main that tail-calls, as
// python's does, or a stack deeper than the recorded frames, has none).
void NoteMainStarted();

// minimal mode: the sorted addresses of the objects live when main() started (never reported);
// nullptr in the other modes.
const MmapArray<uintptr_t>* ObjectsLiveAtMainStart();

}  // namespace heapkit::check

// Optional profiler entry point (weak): stop/resume recording this thread's allocations, used
// by HeapLeakChecker::Disabler. Null until the profiler provides it (then the Disabler falls
// back to a snapshot diff, see heap_checker_api.cc).
namespace heapkit::prof {
__attribute__((weak)) void SetThreadRecordingDisabled(bool disabled);
}  // namespace heapkit::prof
