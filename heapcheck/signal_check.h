// The whole-program check when the process is stopped by a signal (HEAP_CHECK_AT_SIGNAL).
//
// Servers are stopped with SIGTERM or SIGINT, whose default action kills the process without
// running exit handlers, so the exit check never runs. HEAP_CHECK_AT_SIGNAL=TERM,INT (names
// without SIG, or numbers; opt-in) makes the checker take those signals while their
// disposition is the default:
//   * when main() starts, a watcher thread is created (all signals blocked but the checker's
//     suspend signal) that waits on a pipe, and then a handler is installed for each listed
//     signal whose disposition is still SIG_DFL (a handler the program installs later replaces
//     ours: the program then handles the signal itself, and exits through exit() if it wants,
//     which runs the usual check); no main() wrapper (a static executable): no handlers;
//   * the handler only writes the signal number into the pipe (async-signal-safe); it never
//     checks itself, since the interrupted code may hold the allocator's or libc's locks;
//   * the watcher runs the whole-program check (stop the world, report) from its own, ordinary
//     thread context, then restores the default disposition and raises the signal on itself:
//     the process dies by that signal, as it would have without heapkit (no error exit code,
//     stdio not flushed, exit handlers not run).
// A forked child that receives the signal dies by it at once, unchecked (the watcher is the
// parent's); it notes itself first, so the tree's later reports name it (process_tree.h).
#pragma once

#include <cstdint>

namespace heapkit::check {

// The whole-program check the watcher runs, from its own stack (check_driver.h, RunSignalCheck).
using SignalCheck = void (*)(uintptr_t entry_sp, const uintptr_t* regs, int reg_count);

// Start-up: parses the list (one line for a bad entry) and keeps the check to run.
void InstallSignalCheck(const char* spec, SignalCheck check);

// main() started: creates the watcher thread and installs the handlers, if any signal is listed.
void StartSignalCheckWatcher();

}  // namespace heapkit::check
