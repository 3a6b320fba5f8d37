#include "heapcheck/leak_check.h"

#include <unistd.h>

#include "alloc/internal/log.h"
#include "alloc/internal/monotonic_clock.h"
#include "heapcheck/check_gate.h"
#include "heapcheck/check_steps.h"
#include "heapcheck/roots.h"
#include "heapcheck/snapshot_fork.h"
#include "heapcheck/thread_stopper.h"

namespace heapkit::check {
namespace {

// The analysis' part of a result (not its timings, which add up over a fallback).
void ClearAnalysis(CheckResult* out) {
  out->leaks.Clear();
  out->pcs.Clear();
  out->leaked_bytes = out->reachable_objects = out->reachable_bytes = 0;
  out->live_objects = out->unrecorded_objects = 0;
  out->unreadable_ranges_skipped = out->unreadable_bytes_skipped = 0;
  out->threads_stopped = out->threads_traced = 0;
  out->unstopped = UnscannedThreads{};
  out->stack_not_mapped = UnscannedThreads{};
  out->anonymous = AnonymousRootsStats{};
  out->other_rule = OtherPointerRule{};
  out->from_snapshot = false;
}

bool StopThreads(ThreadStopper& stopper, const CheckConfig& config) {
  if (stopper.StopAll(config.stop_timeout_ms)) return true;
  internal::Log("leak check: cannot list threads in /proc/self/task; no check done");
  return false;
}

void NoteThreads(const ThreadStopper& stopper, CheckResult* out) {
  out->threads_stopped = stopper.stopped_count();
  out->threads_traced = stopper.traced_count();
  for (size_t i = 0; i < stopper.unstopped_count(); ++i)
    out->unstopped.Add(i < ThreadStopper::kMaxUnstoppedListed ? stopper.unstopped_tids()[i] : 0);
}

struct Analysis {
  const CheckConfig* config;
  const CheckingThread* self;
  const ThreadStopper* stopper;
  const MmapArray<uintptr_t>* baseline;
};

bool AnalyzeInCopy(void* ctx, CheckResult* out) {
  const auto* a = static_cast<const Analysis*>(ctx);
  return AnalyzeFrozenProcess(*a->config, *a->self, *a->stopper, a->baseline, out);
}

// The pause's clock: started before the stop. The pause ends when every stopped thread has
// been released (thread_stopper.h); the wait for the handlers to leave their slots, which the
// slots' reuse needs, comes after it and is timed apart (CheckResult::seconds_resuming).
class PauseClock {
 public:
  explicit PauseClock(CheckResult* out) : out_(out), start_ns_(internal::MonotonicNanos()) {}
  void Stopped() { out_->seconds_stopping += Seconds(internal::MonotonicNanos() - start_ns_); }
  void Release(ThreadStopper& stopper) {
    stopper.Release();
    stopper.AwaitResumed();
    out_->seconds_releasing += Seconds(stopper.released_ns() - stopper.release_start_ns());
    out_->seconds_stopped += Seconds(stopper.released_ns() - start_ns_);
    out_->seconds_resuming += Seconds(stopper.running_ns() - stopper.released_ns());
  }

 private:
  static double Seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }
  CheckResult* out_;
  int64_t start_ns_;
};

// The stop-the-world check: stop, analyze in place, resume.
bool CheckWithThreadsStopped(const CheckConfig& config, const CheckingThread& self,
                             const MmapArray<uintptr_t>* baseline, CheckResult* out) {
  if (!PrepareCheck(/*populate=*/true)) return false;
  ThreadStopper stopper;
  PauseClock pause(out);
  if (!StopThreads(stopper, config)) return false;
  pause.Stopped();
  const bool ok = AnalyzeFrozenProcess(config, self, stopper, baseline, out);
  pause.Release(stopper);
  NoteThreads(stopper, out);
  return ok;
}

// The snapshot check's first half: stop, fork, resume. True: the copy floods (released);
// false: no copy, and *ok says whether this stop checked instead (fork refused, said once).
bool StartSnapshot(const CheckConfig& config, const CheckingThread& self,
                   const MmapArray<uintptr_t>* baseline, ForkedSnapshot* snapshot, CheckResult* out,
                   bool* ok) {
  *ok = false;
  // After a refusal, prepared as for the stop-the-world check that the refusal leads to.
  if (!PrepareCheck(/*populate=*/ForkedSnapshot::RefusedBefore())) return false;
  ThreadStopper stopper;
  PauseClock pause(out);
  if (!StopThreads(stopper, config)) return false;
  pause.Stopped();
  Analysis analysis{&config, &self, &stopper, baseline};
  const bool forked = snapshot->Start(&AnalyzeInCopy, &analysis, out);
  // Refused (said once): today's check, in this same stop.
  if (!forked) *ok = AnalyzeFrozenProcess(config, self, stopper, baseline, out);
  pause.Release(stopper);  // the threads run again before the copy starts (snapshot_fork.h)
  NoteThreads(stopper, out);
  if (!forked) return false;
  out->seconds_forking = snapshot->seconds_forking();
  snapshot->Release();
  return true;
}

enum class SnapshotCheck { kDone, kFallBack };

// The second half: the copy's result (*ok: whether there is one). kFallBack: the copy was
// lost (said); the caller checks with the threads stopped.
SnapshotCheck FinishSnapshot(const CheckConfig& config, ForkedSnapshot* snapshot, CheckResult* out,
                             bool* ok) {
  *ok = false;
  switch (snapshot->Finish(config.snapshot_timeout_ms, out)) {
    case ForkedSnapshot::Outcome::kResult:
      out->from_snapshot = true;
      *ok = true;
      return SnapshotCheck::kDone;
    case ForkedSnapshot::Outcome::kNoResult: return SnapshotCheck::kDone;
    case ForkedSnapshot::Outcome::kLost: break;
  }
  ClearAnalysis(out);
  return SnapshotCheck::kFallBack;
}

// Who runs the check, as this process sees it: the copy's getpid() would be its own.
CheckingThread CallingThread(uintptr_t entry_sp, const uintptr_t* regs, int reg_count) {
  return CheckingThread{getpid(), gettid(), CurrentThreadPointer(), entry_sp, regs, reg_count};
}

}  // namespace

bool SnapshotLiveObjects(MmapArray<uintptr_t>* out) {
  CheckGate gate(GateWait::kUntilFree);  // check_gate.h: one check or snapshot at a time
  if (!gate.held()) return false;
  out->Clear();
  ThreadStopper stopper;
  if (!stopper.StopAll(2000)) return false;
  const bool listed = ListLiveObjects();
  stopper.ResumeAll();
  return listed && CopyListedObjectStarts(out);
}

void LeakCheckRun::Begin(const CheckConfig& config, uintptr_t entry_sp, const uintptr_t* regs,
                         int reg_count, const MmapArray<uintptr_t>* baseline, CheckResult* out) {
  pending_ = ok_ = false;
  out_ = out;
  started_ = internal::MonotonicSeconds();
  ClearAnalysis(out);
  out->seconds_stopped = out->seconds_total = out->seconds_forking = 0;
  out->seconds_stopping = out->seconds_releasing = out->seconds_resuming = 0;
  if (!CheckGateHeldHere()) {  // the callers hold it (check_gate.h): the scratch is theirs
    internal::Log("leak check: run without holding the check gate; no check done");
    return;
  }
  config_ = config;
  baseline_ = baseline;
  const CheckingThread self = CallingThread(entry_sp, regs, reg_count);
  if (config.fork_snapshot)
    pending_ = StartSnapshot(config_, self, baseline, &snapshot_, out, &ok_);
  else
    ok_ = CheckWithThreadsStopped(config_, self, baseline, out);
}

bool LeakCheckRun::End(uintptr_t entry_sp, const uintptr_t* regs, int reg_count) {
  if (pending_) {
    pending_ = false;
    if (FinishSnapshot(config_, &snapshot_, out_, &ok_) == SnapshotCheck::kFallBack)
      ok_ = CheckWithThreadsStopped(config_, CallingThread(entry_sp, regs, reg_count), baseline_,
                                    out_);
  }
  if (out_ != nullptr) out_->seconds_total = internal::MonotonicSeconds() - started_;
  return ok_;
}

bool RunLeakCheck(const CheckConfig& config, uintptr_t entry_sp, const uintptr_t* regs,
                  int reg_count, const MmapArray<uintptr_t>* baseline, CheckResult* out) {
  LeakCheckRun run;
  run.Begin(config, entry_sp, regs, reg_count, baseline, out);
  return run.End(entry_sp, regs, reg_count);
}

}  // namespace heapkit::check
