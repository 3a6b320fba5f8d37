// Leak checker start-up and the at-exit checks.
//
// Timing of the whole-program check:
//  * before global destructors (minimal, normal, as-is default): an atexit handler registered
//    when main() starts. We interpose __libc_start_main (LD_PRELOAD or -lheapkit: the
//    executable's call binds to our definition) and hand the real one a main() wrapper that
//    registers the handler and calls the program's main. atexit handlers run in reverse order,
//    so ours runs after the program's own atexit handlers and before the destructors of
//    globals constructed before main.
//  * after global destructors (strict, draconian): a destructor of this object. It runs from
//    _dl_fini after every __cxa_atexit destructor of the program, and before the libraries we
//    depend on (libstdc++, libdw) are finalised.
// If the interposition did not happen (e.g. a static executable), the early check falls back to
// the late point.
// The checking thread's stack is scanned from exit()'s caller upwards (see ExitCheckFrom): dead
// frames below it are never roots.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "heapcheck/check_driver.h"
#include "heapcheck/leak_check.h"

extern "C" {
__attribute__((visibility("default"))) int heapkit_heapcheck_anchor = 0;
}

namespace {

using heapkit::check::RunExitCheck;

bool g_early_registered = false;

// The live part of the checking thread's stack at exit starts at the frame that called exit():
// exit() and __run_exit_handlers() frames below it hold stale slots of dead calls (printf's
// buffers, the program's last callees), so they are not roots. Found by unwinding (libunwind,
// .eh_frame: works without frame pointers); the caller's callee-saved registers come from the
// unwound cursor. Falls back to the handler's own frame and registers if exit() is not found
// (e.g. called through an unusual path).
__attribute__((noinline)) void ExitCheckFrom(bool late) {
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  unw_context_t context;
  unw_cursor_t cursor;
  const unw_word_t exit_start = reinterpret_cast<unw_word_t>(&exit);
  if (unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
    for (int depth = 0; depth < 64; ++depth) {
      unw_proc_info_t info;
      bool in_exit = unw_get_proc_info(&cursor, &info) == 0 && info.start_ip == exit_start;
      if (unw_step(&cursor) <= 0) break;
      if (!in_exit) continue;
      unw_word_t caller_sp = 0;
      if (unw_get_reg(&cursor, UNW_REG_SP, &caller_sp) != 0 || caller_sp == 0) break;
#if defined(__x86_64__)
      static const int kCalleeSaved[6] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                                          UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
      for (int i = 0; i < 6; ++i) {
        unw_word_t v = 0;
        regs[i] = unw_get_reg(&cursor, kCalleeSaved[i], &v) == 0 ? v : 0;
      }
#endif
      sp = caller_sp;
      break;
    }
  }
  RunExitCheck(late, sp, regs, 6);
}

__attribute__((noinline)) void EarlyExitCheck() { ExitCheckFrom(false); }

__attribute__((noinline)) void LateExitCheck() {
  auto& s = heapkit::check::CheckerSettings();
  if (!g_early_registered && !s.after_destructors) {
    s.after_destructors = true;  // fallback: no early point was available
  }
  ExitCheckFrom(true);
}

using MainFn = int (*)(int, char**, char**);
MainFn g_real_main = nullptr;

int MainWrapper(int argc, char** argv, char** envp) {
  if (heapkit::check::CheckerActive() && atexit(EarlyExitCheck) == 0) g_early_registered = true;
  return g_real_main(argc, argv, envp);
}

__attribute__((constructor(101))) void HeapcheckInit() {
  heapkit::check::InitCheckerFromEnvironment();
}

__attribute__((destructor(101))) void HeapcheckFini() { LateExitCheck(); }

}  // namespace

using StartMainFn = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);

extern "C" __attribute__((visibility("default"))) int __libc_start_main(
    MainFn main, int argc, char** argv, void (*init)(), void (*fini)(), void (*rtld_fini)(),
    void* stack_end) {
  static StartMainFn real =
      reinterpret_cast<StartMainFn>(dlsym(RTLD_NEXT, "__libc_start_main"));
  g_real_main = main;
  return real(MainWrapper, argc, argv, init, fini, rtld_fini, stack_end);
}
