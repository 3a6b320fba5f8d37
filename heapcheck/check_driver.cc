#include "heapcheck/check_driver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <new>

#include "alloc/common.h"
#include "alloc/internal/log.h"
#include "alloc/observer_hooks.h"
#include "alloc/sampling_period.h"
#include "heapcheck/bounded_exit.h"
#include "heapcheck/check_gate.h"
#include "heapcheck/checker_stack.h"
#include "heapcheck/heap_cleanups.h"
#include "heapcheck/process_tree.h"
#include "heapcheck/report_destination.h"
#include "heapcheck/signal_check.h"
#include "heapcheck/thread_stopper.h"
#include "heapcheck/roots.h"
#include "heapcheck/underscore_exit.h"
#include "profiler/sample_recorder.h"
#include "heapcheck/checker_settings.h"

namespace heapkit::check {
namespace {

Settings g_settings;
HEAPKIT_ALWAYS_WRITTEN_DATA bool g_initialized = false;

// minimal mode: the objects live when main() started (sorted addresses), never reported.
alignas(MmapArray<uintptr_t>) unsigned char g_before_main_storage[sizeof(MmapArray<uintptr_t>)];
MmapArray<uintptr_t>* g_before_main = nullptr;

}  // namespace

HEAPKIT_ALWAYS_RUN_CODE Settings& CheckerSettings() { return g_settings; }
HEAPKIT_ALWAYS_RUN_CODE bool CheckerActive() { return g_settings.mode != Mode::kOff; }

HEAPKIT_ALWAYS_RUN_CODE void InitCheckerFromEnvironment() {
  if (g_initialized) return;
  g_initialized = true;
  // Most processes run without HEAPCHECK: they return here, not touching the parser's code.
  const char* mode = internal::SettingText(CheckerSetting("HEAPCHECK"));
  if (mode == nullptr || mode[0] == '\0') return;
  Settings& s = g_settings;
  if (!ReadCheckerConfig(&s)) return;
  InstallCheckGateForkHandler();
  RememberReportDestination(s.report_path);
  // Read now, like every setting: a program may overwrite its environment before it exits.
  SuspendSignal();
  PtraceStopper::Unavailable();
  if (s.global_check_pending) {
    StartProcessTree();
    InstallSignalCheck(s.at_signal, &RunSignalCheck);
    InstallUnderscoreExitCheck();
  }
  InitThreadLayout();
  // Record every allocation's stack: exact mode (README.md, "Architecture", sampling).
  alloc::SetSamplingPeriod(1);
  // A byte past every object, and no free-list link left in one (observer_hooks.h).
  alloc::SetCheckerObjectLayout(true);
  prof::EnableSampleRecording();
}

namespace {

// When a check runs: a running program goes on after it; at exit or at a signal it ends.
enum class CheckWhen { kRunning, kAtSignal, kAtExit };

// A forked child's report starts with a line naming it (its .heap file carries its pid).
void PrintForkedChildHeader(const char* name) {
  if (std::strcmp(name, "_main_") != 0 || getpid() == g_settings.pid) return;
  internal::LogRaw("Leak check of forked child process %d (parent %d):", static_cast<int>(getpid()),
                   static_cast<int>(getppid()));
}

// Whether a clean check prints its line here (Settings::report_clean).
bool SaysNoLeaks(const ReportDestination& destination) {
  if (g_settings.report_clean >= 0) return g_settings.report_clean == 1;
  return destination.ReadByAPerson() || internal::Verbose();
}

// The check's figures, for HEAPCHECK's verbose runs: its pause (threads stopped -> released),
// how long after the release the last of them ran again, its whole time, and how the address
// space was held still.
void LogCheckFigures(const char* name, const CheckResult& result) {
  char how[96];
  if (result.from_snapshot) {
    internal::FormatTo(how, sizeof how, "flood in a forked snapshot, the fork %llu us",
                       static_cast<unsigned long long>(result.seconds_forking * 1e6));
  } else {
    internal::FormatTo(how, sizeof how, "threads stopped throughout");
  }
  internal::Log(
      "leak check %s: %llu live objects (%llu unrecorded), %zu threads stopped "
      "(%zu with ptrace) for %llu us (all running again %llu us later); the check took %llu "
      "us (%s)",
      name, static_cast<unsigned long long>(result.live_objects),
      static_cast<unsigned long long>(result.unrecorded_objects), result.threads_stopped,
      result.threads_traced, static_cast<unsigned long long>(result.seconds_stopped * 1e6),
      static_cast<unsigned long long>(result.seconds_resuming * 1e6),
      static_cast<unsigned long long>(result.seconds_total * 1e6), how);
  if (result.unreadable_ranges_skipped > 0)
    internal::Log(
        "leak check %s: %zu unreadable ranges inside heap objects not scanned "
        "(%zu bytes: PROT_NONE or unmapped pages)",
        name, result.unreadable_ranges_skipped, result.unreadable_bytes_skipped);
  LogAnonymousRootsFigures(name, result);
}

// The report's last line: the processes of this process tree that ended unchecked before this
// check (process_tree.h), and how.
void SayUncheckedProcesses() {
  const UncheckedProcesses unchecked = ReadUncheckedProcesses();
  if (unchecked.count == 0) return;
  char list[UncheckedProcesses::kListed * 40 + 8];
  size_t used = 0;
  bool any_exit = false;
  for (uint32_t i = 0; i < unchecked.count && i < UncheckedProcesses::kListed; ++i) {
    char pid[16] = "?";  // its slot taken, not yet written: ending right now
    if (unchecked.pids[i] != 0)
      internal::FormatTo(pid, sizeof pid, "%d", static_cast<int>(unchecked.pids[i]));
    char how[32] = "_exit";
    if (unchecked.signals[i] != 0)
      internal::FormatTo(how, sizeof how, "killed by signal %d", unchecked.signals[i]);
    any_exit = any_exit || unchecked.signals[i] == 0;
    used += internal::FormatTo(list + used, sizeof list - used, "%spid %s (%s)", i == 0 ? "" : ", ",
                               pid, how);
  }
  if (unchecked.count > UncheckedProcesses::kListed)
    internal::FormatTo(list + used, sizeof list - used, ", ...");
  internal::LogRaw(
      "Not checked: %u processes of this process tree that ended before this check: %s%s",
      unchecked.count, list,
      any_exit ? "; HEAP_CHECK_AT_UNDERSCORE_EXIT=true checks those that leave "
                 "through _exit"
               : "");
}

// strict and draconian promise a complete answer: without every thread's roots there is none.
void SayIncomplete(const char* name, const CheckResult& result, Mode mode) {
  const char* mode_name = mode == Mode::kStrict ? "strict" : "draconian";
  if (result.unstopped.count > 0)
    internal::LogRaw(
        "Leak check %s failed: %zu threads could not be stopped and were not "
        "scanned; HEAPCHECK=%s gives no result it cannot vouch for",
        name, result.unstopped.count, mode_name);
  if (result.stack_not_mapped.count > 0)
    internal::LogRaw(
        "Leak check %s failed: the stacks of %zu threads were in no mapping and were not "
        "scanned; HEAPCHECK=%s gives no result it cannot vouch for",
        name, result.stack_not_mapped.count, mode_name);
}

bool CheckAndReportHere(const char* name, uintptr_t entry_sp, const uintptr_t* regs, int reg_count,
                        const MmapArray<uintptr_t>* baseline, CheckWhen when, CheckGate* gate,
                        uint64_t* bytes, uint64_t* objects) {
  *bytes = *objects = 0;
  Settings& s = g_settings;
  const bool exit_check = when == CheckWhen::kAtExit;
  // A process about to end gains nothing from running on during its check (README.md,
  // "Snapshot checks"): it stops its threads throughout unless HEAP_CHECK_FORK_SNAPSHOT=all.
  CheckConfig config = s.config;
  if (when != CheckWhen::kRunning) config.fork_snapshot = s.snapshot_ending_checks;
  // Recording off while we work (until the gate is released): the symbolizer uses the normal
  // heap. A snapshot check keeps it on until its result is in: the program runs on meanwhile,
  // and what it allocates unrecorded would be a root, never a leak, in every later check.
  if (!config.fork_snapshot) gate->PauseRecording();
  // The caller holds the check gate: this result, like the checker's stack, is its own.
  alignas(CheckResult) static unsigned char storage[sizeof(CheckResult)];
  static CheckResult* result = nullptr;
  if (result == nullptr) result = new (storage) CheckResult();
  bool ok = RunLeakCheck(config, entry_sp, regs, reg_count, baseline, result);
  gate->PauseRecording();
  bool clean = true;
  if (ok) {
    // These modes promise a complete answer: without every thread's roots there is none.
    const bool incomplete = result->unstopped.count + result->stack_not_mapped.count > 0 &&
                            (s.mode == Mode::kStrict || s.mode == Mode::kDraconian);
    ReportDestination destination(s.report.dump_directory, name,
                                  incomplete || result->leaks.size() > 0);
    if (incomplete || result->leaks.size() > 0 || SaysNoLeaks(destination))
      PrintForkedChildHeader(name);
    if (internal::Verbose()) LogCheckFigures(name, *result);
    if (incomplete) {
      SayIncomplete(name, *result, s.mode);
      clean = false;
    } else {
      ReportOptions opts = s.report;
      opts.check_name = name;
      ReportTotals totals = ReportLeaks(*result, opts);
      if (totals.objects == 0) {
        // Only where a person reads it: a parent parsing its child's stderr sees nothing.
        if (SaysNoLeaks(destination)) ReportNoLeaks(*result, name);
      } else {
        clean = false;
        *bytes = totals.bytes;
        *objects = totals.objects;
      }
    }
    if (!clean && exit_check) {
      // gperftools' exact line; the status is HEAP_CHECK_ERROR_EXIT_CODE (default 1).
      internal::LogRaw(
          "Exiting with error code (instead of crashing) because of "
          "whole-program memory leaks");
    }
    // A whole-program check's report (or its read clean line) ends with the processes of the
    // tree it could not speak for.
    if (when != CheckWhen::kRunning && (!clean || SaysNoLeaks(destination)))
      SayUncheckedProcesses();
  }
  return clean;
}

struct CheckCall {
  const char* name;
  uintptr_t entry_sp;
  const uintptr_t* regs;
  int reg_count;
  const MmapArray<uintptr_t>* baseline;
  CheckWhen when;
  CheckGate* gate;
  uint64_t* bytes;
  uint64_t* objects;
  bool clean;
};

void CheckAndReportCall(void* arg) {
  auto* c = static_cast<CheckCall*>(arg);
  c->clean = CheckAndReportHere(c->name, c->entry_sp, c->regs, c->reg_count, c->baseline, c->when,
                                c->gate, c->bytes, c->objects);
}

}  // namespace

namespace {

bool CheckAndReportOnCheckerStack(const char* name, uintptr_t entry_sp, const uintptr_t* regs,
                                  int reg_count, const MmapArray<uintptr_t>* baseline,
                                  CheckWhen when, uint64_t* bytes, uint64_t* objects) {
  *bytes = *objects = 0;
  // One check at a time (check_gate.h): the checker's stack, the scratch and the result are
  // the holder's. A check asked for from inside one is refused (said in one line): no report.
  CheckGate gate(GateWait::kUntilFree);
  if (!gate.held()) return true;
  // On the checker's own stack: the caller's may be small (checker_stack.h).
  CheckCall call{name, entry_sp, regs, reg_count, baseline, when, &gate, bytes, objects, true};
  RunOnCheckerStack(&CheckAndReportCall, &call);
  return call.clean;
}

}  // namespace

bool CheckAndReport(const char* name, uintptr_t entry_sp, const uintptr_t* regs, int reg_count,
                    const MmapArray<uintptr_t>* baseline, uint64_t* bytes, uint64_t* objects) {
  return CheckAndReportOnCheckerStack(name, entry_sp, regs, reg_count, baseline,
                                      CheckWhen::kRunning, bytes, objects);
}

void RunSignalCheck(uintptr_t entry_sp, const uintptr_t* regs, int reg_count) {
  Settings& s = g_settings;
  if (!s.global_check_pending) return;
  s.global_check_pending = false;
  RunHeapCleanupsOnce();
  uint64_t bytes, objects;
  CheckAndReportOnCheckerStack("_main_", entry_sp, regs, reg_count, g_before_main,
                               CheckWhen::kAtSignal, &bytes, &objects);
}

bool RunUnderscoreExitCheck(uintptr_t entry_sp, const uintptr_t* regs, int reg_count) {
  Settings& s = g_settings;
  if (!s.global_check_pending) return true;
  s.global_check_pending = false;
  RunHeapCleanupsOnce();
  uint64_t bytes, objects;
  return CheckAndReportOnCheckerStack("_main_", entry_sp, regs, reg_count, g_before_main,
                                      CheckWhen::kAtExit, &bytes, &objects);
}

void NoteMainStarted() {
  StartSignalCheckWatcher();
  if (g_settings.mode != Mode::kMinimal || g_before_main != nullptr) return;
  g_before_main = new (g_before_main_storage) MmapArray<uintptr_t>();
  if (!SnapshotLiveObjects(g_before_main))
    internal::Log(
        "HEAPCHECK=minimal: the objects live when main() started could not be listed; "
        "they may be reported too");
}

const MmapArray<uintptr_t>* ObjectsLiveAtMainStart() { return g_before_main; }

void RunExitCheck(bool late, uintptr_t entry_sp, const uintptr_t* regs, int reg_count) {
  Settings& s = g_settings;
  if (!s.global_check_pending || s.after_destructors != late) return;
  // A forked child that exits through exit() is checked like the parent (own report, own
  // .heap name by its pid); _exit and quick_exit run no exit handlers and skip the check.
  if (getpid() != s.pid && !s.check_children) return;
  s.global_check_pending = false;
  RunHeapCleanupsOnce();
  uint64_t bytes, objects;
  if (CheckAndReportOnCheckerStack("_main_", entry_sp, regs, reg_count, g_before_main,
                                   CheckWhen::kAtExit, &bytes, &objects))
    return;
  FlushStdioAndExit(s.exit_code);
}

}  // namespace heapkit::check
