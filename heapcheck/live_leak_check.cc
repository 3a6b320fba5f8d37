#include "heapcheck/live_leak_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <new>

#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "heapcheck/check_driver.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/leak_groups.h"

namespace heapkit::check {
namespace {

internal::SpinLock g_live_check_lock;

// The live checks' result (mmap'd arrays), kept apart from the exit check's. Built on first
// use under g_live_check_lock (no guard variable: the runtime has no C++ runtime to call).
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

}  // namespace

__attribute__((noinline)) int WriteLeakProfileNow(LeakProfileSink sink, void* ctx, uint64_t* bytes,
                                                  uint64_t* objects) {
  *bytes = *objects = 0;
  if (!CheckerActive()) return 0;
  internal::SpinLockHolder h(&g_live_check_lock);
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  CheckResult& result = LiveResult();
  if (!RunLeakCheck(CheckerSettings().config, sp, regs, 6, ObjectsLiveAtMainStart(), &result))
    return -1;
  LeakGroups groups(result);
  if (!groups.Build()) return -1;
  for (const LeakRecord& r : result.leaks) {
    *bytes += r.bytes;
    ++*objects;
  }
  char header[128];
  internal::FormatTo(
      header, sizeof header, "heap profile: %6llu: %8llu [%6llu: %8llu] @ heapprofile\n",
      static_cast<unsigned long long>(*objects), static_cast<unsigned long long>(*bytes),
      static_cast<unsigned long long>(*objects), static_cast<unsigned long long>(*bytes));
  Write(sink, ctx, header);
  WriteRecords(groups, sink, ctx);
  WriteMaps(sink, ctx);
  return 1;
}

}  // namespace heapkit::check
