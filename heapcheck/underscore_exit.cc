#include "heapcheck/underscore_exit.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "alloc/common.h"
#include "alloc/internal/log.h"
#include "heapcheck/check_driver.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/process_tree.h"

namespace heapkit::check {
namespace {

using ExitFn = void (*)(int);

bool g_installed = false;          // a process that checks (false: straight through)
ExitFn g_real_exit = nullptr;      // _exit after us (RTLD_NEXT)
ExitFn g_real_exit_c99 = nullptr;  // _Exit

[[noreturn]] HEAPKIT_ALWAYS_RUN_CODE void LeaveNow(ExitFn real, int status) {
  if (real != nullptr) real(status);
  for (;;) syscall(SYS_exit_group, status);
}

// What _exit/_Exit do before the real one (underscore_exit.h); returns the status to leave with.
__attribute__((noinline)) int CheckBeforeUnderscoreExit(int status) {
  if (!InOwnMemory()) return status;  // a vfork child: hands off
  Settings& s = CheckerSettings();
  if (!s.global_check_pending) return status;
  const pid_t pid = getpid();
  if (pid != s.pid && !s.check_children) return status;
  if (!s.at_underscore_exit) {
    NoteEndedUnchecked(pid, 0);
    if (internal::Verbose())
      internal::Log(
          "leak check: process %d leaves through _exit(%d) unchecked "
          "(HEAP_CHECK_AT_UNDERSCORE_EXIT=true checks it)",
          static_cast<int>(pid), status);
    return status;
  }
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  // This frame's callers are the program's live frames; nothing below it is scanned.
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return RunUnderscoreExitCheck(sp, regs, 6) ? status : s.exit_code;
}

}  // namespace

void InstallUnderscoreExitCheck() {
  g_real_exit = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "_exit"));
  g_real_exit_c99 = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "_Exit"));
  g_installed = true;
}

}  // namespace heapkit::check

// Before the checker starts (another library's constructor) and in processes that do not check:
// straight to the real function (the system call when it is not known yet).
// The declarations are unistd.h's (_exit) and stdlib.h's (_Exit, which glibc marks __THROW).
extern "C" __attribute__((visibility("default"), noreturn)) HEAPKIT_ALWAYS_RUN_CODE void _exit(
    int status) {
  using namespace heapkit::check;
  if (g_installed) status = CheckBeforeUnderscoreExit(status);
  LeaveNow(g_real_exit, status);
}

extern "C" __attribute__((visibility("default"), noreturn)) HEAPKIT_ALWAYS_RUN_CODE void _Exit(
    int status) noexcept {
  using namespace heapkit::check;
  if (g_installed) status = CheckBeforeUnderscoreExit(status);
  LeaveNow(g_real_exit_c99, status);
}
