#include "heapcheck/live_leak_check.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "heapcheck/check_driver.h"
#include "heapcheck/check_gate.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/leak_groups.h"

namespace heapkit::check {
namespace {

// The live checks' result (mmap'd arrays), kept apart from the exit check's. Built on first
// use by the check gate's holder (no guard variable: the runtime has no C++ runtime to call).
alignas(CheckResult) unsigned char g_result_storage[sizeof(CheckResult)];
CheckResult* g_result = nullptr;

CheckResult& LiveResult() {
  if (g_result == nullptr) g_result = new (g_result_storage) CheckResult();
  return *g_result;
}

void Write(LeakProfileSink sink, void* ctx, const char* text) {
  size_t n = 0;
  while (text[n] != '\0') ++n;
  sink(ctx, text, n);
}

// One "count: bytes [count: bytes] @ pc pc ..." line per allocation stack. LeakGroups keeps
// direct and indirect leaks of one stack apart (its `dropped` flag, unused here, marks the
// groups already written).
void WriteRecords(LeakGroups& groups, LeakProfileSink sink, void* ctx) {
  char line[64];
  for (LeakGroup* g = groups.begin(); g != groups.end();) {
    const LeakRecord& head = groups.Head(*g);
    const uintptr_t* stack = groups.Stack(head);
    uint64_t count = 0, bytes = 0;
    LeakGroup* next = g;
    // Same stack, other state: LeakGroups sorts by state first, so look through all groups.
    for (; next != groups.end(); ++next) {
      const LeakRecord& other = groups.Head(*next);
      if (other.depth != head.depth) continue;
      bool same = true;
      for (int d = 0; d < head.depth && same; ++d) same = groups.Stack(other)[d] == stack[d];
      if (!same || next->dropped) continue;
      count += next->count;
      bytes += next->bytes;
      next->dropped = true;  // written
    }
    internal::FormatTo(
        line, sizeof line, "%6llu: %8llu [%6llu: %8llu] @", static_cast<unsigned long long>(count),
        static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(count),
        static_cast<unsigned long long>(bytes));
    Write(sink, ctx, line);
    for (int d = 0; d < head.depth; ++d) {
      internal::FormatTo(line, sizeof line, " 0x%llx", static_cast<unsigned long long>(stack[d]));
      Write(sink, ctx, line);
    }
    Write(sink, ctx, "\n");
    while (g != groups.end() && g->dropped) ++g;
  }
}

void WriteMaps(LeakProfileSink sink, void* ctx) {
  Write(sink, ctx, "\nMAPPED_LIBRARIES:\n");
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) sink(ctx, buf, static_cast<size_t>(n));
  close(fd);
}

// The last live check, for the spacing and for kTooSoon's answer. Written by the live check
// with the gate held; read before the gate is tried (a refusal costs no wait), so under a lock
// of its own (a leaf: nothing is taken while it is held).
struct LastLiveCheck {
  bool ran = false;
  int64_t ended = 0;  // CLOCK_MONOTONIC
  int64_t duration = 0;
  LeakCheckAnswer answer;  // as it was given, status kChecked or kFailed
};
internal::SpinLock g_last_lock;
LastLiveCheck g_last;

int64_t Nanos(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// kTooSoon in *answer (with the last check's figures) when the spacing is not kept at now.
bool TooSoon(int64_t now, LeakCheckAnswer* answer) {
  internal::SpinLockHolder h(&g_last_lock);
  if (!g_last.ran) return false;
  const int64_t next = LiveCheckNextStart(g_last.ended, g_last.duration,
                                          CheckerSettings().live_min_interval_ms * 1000000);
  if (now >= next) return false;
  *answer = g_last.answer;
  answer->status = LeakCheckAnswer::kTooSoon;
  answer->retry_after_seconds = static_cast<double>(next - now) / 1e9;
  return true;
}

void NoteLastCheck(int64_t started, const LeakCheckAnswer& answer) {
  const int64_t ended = Nanos(CLOCK_MONOTONIC);
  internal::SpinLockHolder h(&g_last_lock);
  g_last.ran = true;
  g_last.ended = ended;
  g_last.duration = ended - started;
  g_last.answer = answer;
}

// The live check between its halves: the gate (held by the server's thread from Begin to End)
// and the check. Built in place on Begin and destroyed by End (no guard variables: the runtime
// has no C++ runtime to call); only the gate's holder touches them.
struct PendingLiveCheck {
  alignas(CheckGate) unsigned char gate_storage[sizeof(CheckGate)];
  alignas(LeakCheckRun) unsigned char run_storage[sizeof(LeakCheckRun)];
  CheckGate* gate = nullptr;
  LeakCheckRun* run = nullptr;
  int64_t started = 0;
};
PendingLiveCheck g_pending;
// Whether a live check is between its halves: a second request answers kBusy without asking
// the gate again from the thread that holds it (which would be refused with a line).
std::atomic<bool> g_live_check_begun{false};

// The profile of a finished check, with the gate held. false: no result.
bool WriteProfile(CheckResult& result, LeakProfileSink sink, void* ctx, LeakCheckAnswer* answer) {
  answer->seconds_stopped = result.seconds_stopped;
  LeakGroups groups(result);
  if (!groups.Build()) return false;
  for (const LeakRecord& r : result.leaks) {
    answer->bytes += r.bytes;
    ++answer->objects;
  }
  char header[128];
  internal::FormatTo(header, sizeof header,
                     "heap profile: %6llu: %8llu [%6llu: %8llu] @ heapprofile\n",
                     static_cast<unsigned long long>(answer->objects),
                     static_cast<unsigned long long>(answer->bytes),
                     static_cast<unsigned long long>(answer->objects),
                     static_cast<unsigned long long>(answer->bytes));
  Write(sink, ctx, header);
  WriteRecords(groups, sink, ctx);
  WriteMaps(sink, ctx);
  return true;
}

// The check's first half, with the gate held: the calling frame's registers and stack pointer.
__attribute__((noinline)) void BeginCheck(LeakCheckRun* run) {
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  CheckConfig config = CheckerSettings().config;
  config.compare_other_pointer_rule = false;  // a profile, no report: no line to print
  run->Begin(config, sp, regs, 6, ObjectsLiveAtMainStart(), &LiveResult());
}

__attribute__((noinline)) bool EndCheck(LeakCheckRun* run) {
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return run->End(sp, regs, 6);
}

}  // namespace

int BeginLiveLeakCheck(LeakCheckAnswer* answer) {
  *answer = LeakCheckAnswer{};
  if (!CheckerActive()) {
    answer->status = LeakCheckAnswer::kOff;
    return -1;
  }
  answer->status = LeakCheckAnswer::kBusy;
  answer->retry_after_seconds = 1;
  if (g_live_check_begun.load(std::memory_order_acquire)) return -1;
  if (TooSoon(Nanos(CLOCK_MONOTONIC), answer)) return -1;
  CheckGate* gate = new (g_pending.gate_storage) CheckGate(GateWait::kBriefly);
  if (!gate->held()) {
    gate->~CheckGate();
    return -1;
  }
  g_live_check_begun.store(true, std::memory_order_release);
  g_pending.gate = gate;
  g_pending.started = Nanos(CLOCK_MONOTONIC);
  if (TooSoon(g_pending.started, answer)) {  // another live caller ran one meanwhile
    g_pending.gate = nullptr;
    gate->~CheckGate();
    g_live_check_begun.store(false, std::memory_order_release);
    return -1;
  }
  g_pending.run = new (g_pending.run_storage) LeakCheckRun();
  BeginCheck(g_pending.run);
  answer->status = LeakCheckAnswer::kPending;
  answer->wait_ms = CheckerSettings().config.snapshot_timeout_ms;
  return g_pending.run->wait_fd();
}

void EndLiveLeakCheck(LeakProfileSink sink, void* ctx, LeakCheckAnswer* answer) {
  *answer = LeakCheckAnswer{};
  LeakCheckRun* run = g_pending.run;
  if (run == nullptr || !CheckGateHeldHere()) {
    internal::Log("leak check: the live check ended without being begun on this thread");
    return;
  }
  const bool checked = EndCheck(run) && WriteProfile(LiveResult(), sink, ctx, answer);
  answer->status = checked ? LeakCheckAnswer::kChecked : LeakCheckAnswer::kFailed;
  answer->ended_unix_nanos = Nanos(CLOCK_REALTIME);
  answer->seconds = static_cast<double>(Nanos(CLOCK_MONOTONIC) - g_pending.started) / 1e9;
  NoteLastCheck(g_pending.started, *answer);
  run->~LeakCheckRun();
  g_pending.run = nullptr;
  CheckGate* gate = g_pending.gate;
  g_pending.gate = nullptr;
  gate->~CheckGate();
  g_live_check_begun.store(false, std::memory_order_release);
}

}  // namespace heapkit::check
