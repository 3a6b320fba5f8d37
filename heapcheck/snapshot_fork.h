// A forked snapshot of the process, so that a check of a running program stops its threads
// only for the fork (libmemunreachable's design): the threads are stopped (their registers,
// stack pointers and thread pointers saved in memory by the stopper), the process is forked,
// every thread is resumed at once, and the flood runs in the copy-on-write copy, which sends
// its leak records and figures back through a pipe and exits. README.md, "Snapshot checks",
// lists the hazards and how each is designed out; in short:
//
//  - The fork is a raw clone system call, not glibc's fork(): that runs the atfork handlers
//    (alloc/internal/fork_handlers.h), and those take the allocator's and the profiler's locks,
//    which a stopped thread may hold. Exit signal 0 (the program sees no SIGCHLD, a SIGCHLD
//    handler's waitpid(-1) does not reap it, SIG_IGN does not auto-reap it; only a __WALL wait
//    sees it) and CLONE_UNTRACED (a debugger following forks does not take it).
//  - The copy is single-threaded and every lock held by a stopped thread stays held in it
//    forever: it runs only the check's own malloc-free, lock-free steps (check_steps.h) and raw
//    system calls, never malloc, stdio, the loader or the symbolizer, and leaves with
//    exit_group: no atexit handler, no destructor, no stdio flush, no HEAPCHECK child check.
//  - Start: the copy is born with every signal blocked and waits for SIGCONT, which Finish
//    sends once the program's threads run again (a copy flooding at once took a core from
//    the threads being resumed, and the pause lasted until the last of them was scheduled).
//  - Signals: the copy blocks every signal, puts the fault signals back to SIG_DFL (a crash in
//    it must not run the program's crash handler), writes no core (RLIMIT_CORE 0: it would be
//    the size of the heap), dies with the checking thread (PR_SET_PDEATHSIG) and is the OOM
//    killer's first choice (oom_score_adj 1000).
//  - The parent waits for it only until a deadline; a copy that dies, hangs or sends a
//    malformed result is killed and reaped, with one line, and the caller checks again with
//    the threads stopped. A refused fork (RLIMIT_NPROC, a pids cgroup, seccomp, overcommit
//    limits) is said once per process; the caller checks with the threads stopped.
//
// Start and Finish run on the checking thread only: Start with every other thread stopped,
// Finish once they run again. One snapshot at a time (the callers' check gate).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace heapkit::check {

struct CheckResult;

// What the copy does: fills *out (its leak records, pcs, figures). False: no result (it says
// why in one line).
using SnapshotAnalysis = bool (*)(void* ctx, CheckResult* out);

class ForkedSnapshot {
 public:
  ForkedSnapshot() = default;
  ForkedSnapshot(const ForkedSnapshot&) = delete;
  ForkedSnapshot& operator=(const ForkedSnapshot&) = delete;
  ~ForkedSnapshot();  // a copy still running is killed and reaped: none outlives the check

  // Every other thread stopped. Forks the copy, which runs analysis(ctx, out) on its own copy
  // of *out, sends the result and exits: Start returns only in the calling process. False when
  // no copy was made (the fork refused: the first refusal in the process says so in one line).
  bool Start(SnapshotAnalysis analysis, void* ctx, CheckResult* out);

  enum class Outcome {
    kResult,    // *out holds the copy's leak records, pcs and figures
    kNoResult,  // the copy could not check (said in one line): no result
    kLost,      // the copy died, hung or sent a malformed result: killed, reaped, one line
  };
  // World running again: the copy starts its analysis (until now it waits, so that it takes
  // no CPU from the threads being resumed).
  void Release();
  // The read end of the copy's pipe: readable once its result begins to arrive, hung up when
  // it exits (for a caller that polls). -1 when no copy runs.
  int result_fd() const { return read_fd_; }
  // Releases the copy if not yet done, waits for its result until timeout_ms after the
  // release, reads it into *out and reaps the copy.
  Outcome Finish(int timeout_ms, CheckResult* out);

  // How long the fork itself took (the page-table copy): the larger part of the pause.
  double seconds_forking() const { return seconds_forking_; }

  // Whether a fork was refused in this process before (callers then prepare a check to run
  // with the threads stopped).
  static bool RefusedBefore();

 private:
  void KillAndReap();

  pid_t pid_ = -1;
  int read_fd_ = -1;
  int64_t released_ns_ = -1;  // CLOCK_MONOTONIC; -1: the copy still waits
  double seconds_forking_ = 0;
};

}  // namespace heapkit::check
