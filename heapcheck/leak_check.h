// One leak check: stop the world, snapshot the live heap, collect roots, flood, record leaks,
// restart the world. The analysis (check_steps.h) is malloc-free and lock-free with respect to
// the allocator (the allocator's enumeration and the profiler's lookup are stopped-world safe
// by contract); memory comes from mmap (MmapArray).
//
// Two ways to hold the address space still for the analysis (README.md, "Snapshot checks"):
//  - a forked snapshot (CheckConfig::fork_snapshot, snapshot_fork.h): the threads are stopped
//    only while the process forks a copy-on-write copy of itself, then resumed; the analysis
//    runs in the copy, which sends the result back. The pause is the stop plus the fork.
//  - stop-the-world: the threads stay stopped for the whole analysis. Used when the snapshot
//    is off (the exit check, HEAP_CHECK_FORK_SNAPSHOT=false), when the fork is refused, and
//    when the copy is lost (died, hung): the results are the same, only the pause differs.
//
// Object sizes are the REQUESTED sizes from the profiler's table (like gperftools), so reports
// show what the program asked for and slack bytes past the request are not scanned.
// Objects the profiler did not record (allocated before recording started, or under a
// Disabler) and objects allocated by the dynamic loader (DTVs, link maps: leaf frame in ld.so)
// are treated as live roots: never reported, and what they reach is not a leak.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/anonymous_roots.h"
#include "heapcheck/flood.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/snapshot_fork.h"
#include "heapcheck/thread_stopper.h"

namespace heapkit::check {

struct CheckConfig {
  FloodOptions flood;
  bool scan_globals = true;             // HEAP_CHECK_IGNORE_GLOBAL_LIVE
  bool scan_threads = true;             // HEAP_CHECK_IGNORE_THREAD_LIVE
  bool scan_anonymous = true;           // HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS (with globals)
  bool test_pointer_alignment = false;  // HEAP_CHECK_TEST_POINTER_ALIGNMENT
  // Flood again with the other interior-pointer rule for the report's line (OtherPointerRule).
  bool compare_other_pointer_rule = true;
  int stop_timeout_ms = 2000;
  // Flood in a forked snapshot instead of with the threads stopped (HEAP_CHECK_FORK_SNAPSHOT;
  // the driver turns it off for the exit and signal checks unless that setting says `all`).
  bool fork_snapshot = false;
  int snapshot_timeout_ms = 600000;  // HEAP_CHECK_SNAPSHOT_TIMEOUT_MS: the wait for the copy
};

struct LeakRecord {
  uintptr_t address;
  uint64_t bytes;      // requested size
  uint32_t pc_offset;  // index of the first pc in CheckResult::pcs
  uint16_t depth;
  uint8_t state;                     // kLeakedDirect / kLeakedIndirect
  uint8_t unaligned_reachable : 1;   // reachable when pointers may be unaligned (test alignment)
  uint8_t other_rule_reachable : 1;  // reachable under the other interior-pointer rule
};

// What the other interior-pointer rule would change (README.md, "Interior pointers"): the
// check floods a second time with it. Under a bounded rule (HEAP_CHECK_MAX_POINTER_OFFSET >= 0)
// the other is LeakSanitizer's, any interior pointer: it can only keep more objects, so the
// second flood runs when there are leaks and marks the leaked records it would keep
// (LeakRecord::other_rule_reachable). Under any interior pointer the other is gperftools'
// 1024 B: the figure is the reachable objects it would report (lost_objects/lost_bytes).
// The second flood costs what the first did; it is left out when the first took longer than
// kOtherRuleFloodBudgetSeconds (the threads may be stopped meanwhile).
struct OtherPointerRule {
  enum class Outcome : uint8_t { kNotRun, kComputed, kFloodTooLong };
  static constexpr int64_t kGperftoolsMaxOffset = 1024;
  static constexpr double kOtherRuleFloodBudgetSeconds = 1.0;
  Outcome outcome = Outcome::kNotRun;
  int64_t max_pointer_offset = 0;  // the other rule's
  uint64_t lost_objects = 0;       // any-interior check: reachable now, leaks under the other
  uint64_t lost_bytes = 0;
  uint64_t first_flood_us = 0;  // the check's own flood (kFloodTooLong says it)
};
// The rule a check compares its own with: any interior pointer for a bounded rule, else 1024 B.
constexpr int64_t OtherMaxPointerOffset(int64_t max_pointer_offset) {
  return max_pointer_offset >= 0 ? -1 : OtherPointerRule::kGperftoolsMaxOffset;
}

// Threads whose stacks and registers a check could not scan (so objects only they point to are
// reported although they are not leaks): how many, and the first few thread ids.
struct UnscannedThreads {
  size_t count = 0;
  pid_t tids[ThreadStopper::kMaxUnstoppedListed] = {};
  void Add(pid_t tid) {
    if (count < ThreadStopper::kMaxUnstoppedListed) tids[count] = tid;
    ++count;
  }
};

struct CheckResult {
  MmapArray<LeakRecord> leaks;
  MmapArray<uintptr_t> pcs;
  uint64_t leaked_bytes = 0;
  uint64_t reachable_objects = 0;
  uint64_t reachable_bytes = 0;
  uint64_t live_objects = 0;
  uint64_t unrecorded_objects = 0;
  size_t threads_stopped = 0;
  size_t threads_traced = 0;  // of those, stopped with ptrace (they block the suspend signal)
  // The pause: from the first stop signal until every stopped thread is released (traced ones
  // detached, handlers woken), every stop of the check added.
  double seconds_stopped = 0;
  double seconds_total = 0;  // the whole check, preparation to result
  // Parts of the pause: stopping the threads (StopAll), the fork (its page-table copy; 0: no
  // fork) and the release. The rest of it is the check's own steps in between (the
  // stop-the-world check's flood; a snapshot's pipe and signal masks).
  double seconds_stopping = 0;
  double seconds_forking = 0;
  double seconds_releasing = 0;
  // After the pause: from the release until the last released thread has left its handler
  // (the scheduler running it again), which the slots' reuse waits for.
  double seconds_resuming = 0;
  bool from_snapshot = false;            // the analysis ran in a forked snapshot
  UnscannedThreads unstopped;            // alive but not stopped
  UnscannedThreads stack_not_mapped;     // stopped, but no mapping held their stack
  size_t unreadable_ranges_skipped = 0;  // parts of objects in unreadable memory, not scanned
  size_t unreadable_bytes_skipped = 0;
  AnonymousRootsStats anonymous;  // the program's anonymous memory scanned as roots
  OtherPointerRule other_rule;    // what the other interior-pointer rule would change
};

// entry_sp: the lowest live stack address of the calling thread (the check's entry frame);
// regs/reg_count: the calling thread's callee-saved registers at entry.
// baseline: sorted object addresses that are excluded from the report (named checks).
// False if the check could not run (logged). The caller holds the check gate (check_gate.h),
// which also covers what it keeps of the result.
bool RunLeakCheck(const CheckConfig& config, uintptr_t entry_sp, const uintptr_t* regs,
                  int reg_count, const MmapArray<uintptr_t>* baseline, CheckResult* out);

// One check in two halves, for a caller that goes on with other work while the copy floods
// (the live endpoint's server thread, which serves other clients meanwhile): Begin stops the
// threads, forks the copy and resumes them — or, with no copy, checks with the threads
// stopped —; while pending(), wait_fd() becomes readable when the copy's result arrives (or
// hangs up when the copy dies); End collects it, checking with the threads stopped if the
// copy was lost or is late (HEAP_CHECK_SNAPSHOT_TIMEOUT_MS after Begin). RunLeakCheck is
// Begin then End. Both halves run on the thread that holds the check gate, which keeps it
// held in between; *out and baseline must live until End.
class LeakCheckRun {
 public:
  LeakCheckRun() = default;
  LeakCheckRun(const LeakCheckRun&) = delete;
  LeakCheckRun& operator=(const LeakCheckRun&) = delete;

  // Arguments as RunLeakCheck's. End follows, whatever happened.
  void Begin(const CheckConfig& config, uintptr_t entry_sp, const uintptr_t* regs, int reg_count,
             const MmapArray<uintptr_t>* baseline, CheckResult* out);
  bool pending() const { return pending_; }
  int wait_fd() const { return pending_ ? snapshot_.result_fd() : -1; }
  // The result, as RunLeakCheck's (false: none, logged). entry_sp and regs: the calling thread's
  // now, for a check with the threads stopped after a lost copy.
  bool End(uintptr_t entry_sp, const uintptr_t* regs, int reg_count);

 private:
  CheckConfig config_;
  const MmapArray<uintptr_t>* baseline_ = nullptr;
  CheckResult* out_ = nullptr;
  ForkedSnapshot snapshot_;
  double started_ = 0;
  bool pending_ = false;  // the copy floods: End collects it
  bool ok_ = false;       // Begin's result when nothing is pending
};

// Sorted addresses of all live heap objects (stops the world briefly). Takes the check gate
// (waits for a running check); false if the snapshot could not be taken.
bool SnapshotLiveObjects(MmapArray<uintptr_t>* out);

// Spills the callee-saved registers of the caller into regs[0..6).
#define HEAPKIT_CAPTURE_CALLEE_SAVED(regs)                            \
  asm volatile(                                                       \
      "mov %%rbx, 0(%0)\n\tmov %%rbp, 8(%0)\n\tmov %%r12, 16(%0)\n\t" \
      "mov %%r13, 24(%0)\n\tmov %%r14, 32(%0)\n\tmov %%r15, 40(%0)"   \
      :                                                               \
      : "r"(regs)                                                     \
      : "memory")

}  // namespace heapkit::check
