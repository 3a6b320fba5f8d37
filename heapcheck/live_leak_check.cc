#include "heapcheck/live_leak_check.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

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

// The check and its profile, with the gate held. false: the check could not run.
__attribute__((noinline)) bool CheckAndWrite(LeakProfileSink sink, void* ctx,
                                             LeakCheckAnswer* answer) {
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  CheckResult& result = LiveResult();
  CheckConfig config = CheckerSettings().config;
  config.compare_other_pointer_rule = false;  // a profile, no report: no line to print
  if (!RunLeakCheck(config, sp, regs, 6, ObjectsLiveAtMainStart(), &result)) return false;
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

}  // namespace

void WriteLeakProfileNow(LeakProfileSink sink, void* ctx, LeakCheckAnswer* answer) {
  *answer = LeakCheckAnswer{};
  if (!CheckerActive()) {
    answer->status = LeakCheckAnswer::kOff;
    return;
  }
  if (TooSoon(Nanos(CLOCK_MONOTONIC), answer)) return;
  CheckGate gate(GateWait::kBriefly);
  if (!gate.held()) {
    answer->status = LeakCheckAnswer::kBusy;
    answer->retry_after_seconds = 1;
    return;
  }
  const int64_t started = Nanos(CLOCK_MONOTONIC);
  if (TooSoon(started, answer)) return;  // another live caller ran one meanwhile
  answer->status =
      CheckAndWrite(sink, ctx, answer) ? LeakCheckAnswer::kChecked : LeakCheckAnswer::kFailed;
  answer->ended_unix_nanos = Nanos(CLOCK_REALTIME);
  answer->seconds = static_cast<double>(Nanos(CLOCK_MONOTONIC) - started) / 1e9;
  NoteLastCheck(started, *answer);
}

}  // namespace heapkit::check
