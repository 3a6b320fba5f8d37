// _exit() and _Exit(): the whole-program check of a process that leaves without exit handlers
// (HEAP_CHECK_AT_UNDERSCORE_EXIT, opt-in).
//
// Forked children often end with _exit() — rsync's receiver from its SIGUSR2 handler, servers'
// workers, the child half of every fork-and-exec whose exec failed — so exit()'s handler, where
// the check runs, never sees them. The runtime defines _exit and _Exit (LD_PRELOAD or -lheapkit:
// the program's calls bind to them; glibc's own call at the end of exit() is internal and does
// not), and each of them, before the real _exit:
//   * in a vfork() child (or any task that shares the process's memory without fork()'s
//     handlers having run: posix_spawn's, a raw clone): nothing at all. It shares its parent's
//     heap, scratch and checker state while the parent's other threads run on; a check there
//     would stop and scan the parent's memory and corrupt its state (process_tree.h,
//     InOwnMemory);
//   * with no whole-program check pending (one ran already, `local` mode, a child with
//     HEAP_CHECK_CHILDREN=false): nothing;
//   * without the opt-in: notes the process in the tree's record (process_tree.h), so the
//     report of a process that checks later names it, and says so itself with PERFTOOLS_VERBOSE;
//   * with it: the whole-program check, as at exit (its cleanups, its report), then the real
//     _exit with the given status, or HEAP_CHECK_ERROR_EXIT_CODE after leaks. stdio is not
//     flushed (an _exit in a forked child would otherwise write its parent's buffered output a
//     second time).
// _exit() called from a signal handler (rsync's) is checked like any: the check stops the
// other threads and scans malloc-free, but the report symbolizes with the heap, so a handler
// that interrupted the allocator or the dynamic loader on the same thread could wait for a lock
// that thread holds (README.md, "_exit and fatal signals"). A privileged (AT_SECURE) process
// reads none of these settings: no check runs in it.
#pragma once

namespace heapkit::check {

// Start-up, in a process that checks (after StartProcessTree): the real functions, and the
// checks on.
void InstallUnderscoreExitCheck();

}  // namespace heapkit::check
