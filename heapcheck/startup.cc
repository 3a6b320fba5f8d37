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
//    _dl_fini after every __cxa_atexit destructor of the program. The on-demand library
//    (libunwind, the symbolizer; profiler/on_demand/on_demand_library.h), dlopen'd after us, is
//    finalised before this runs; it keeps no state a finaliser tears down, so the check still uses
//    it.
// If the interposition did not happen (e.g. a static executable), the early check falls back to
// the late point.
// The checking thread's stack is scanned from exit()'s caller upwards (see ExitCheckFrom): dead
// frames below it are never roots.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

#include "alloc/common.h"
#include "heapcheck/check_driver.h"
#include "heapcheck/leak_check.h"
#include "profiler/heap_profiler.h"
#include "profiler/on_demand/on_demand_library.h"

extern "C" {
__attribute__((visibility("default"))) int heapkit_heapcheck_anchor = 0;
}

namespace {

using heapkit::check::RunExitCheck;

bool g_early_registered = false;

// The live part of the checking thread's stack at exit starts at the frame that called exit():
// exit() and __run_exit_handlers() frames below it hold stale slots of dead calls (printf's
// buffers, the program's last callees), so they are not roots. Found by unwinding (libunwind in
// the on-demand library, profiler/on_demand/on_demand_library.h; .eh_frame: works without frame
// pointers), which also gives the caller's callee-saved registers. Falls back to the handler's
// own frame and registers if exit() is not found (e.g. called through an unusual path). A
// process with no check pending returns at once: every process runs the late check's
// destructor.
__attribute__((noinline)) void ExitCheckFrom(bool late) {
  if (!heapkit::check::CheckerSettings().global_check_pending) return;
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (const heapkit::prof::OnDemandApi* api = heapkit::prof::LoadOnDemandLibrary()) {
    api->find_caller_of(reinterpret_cast<uintptr_t>(&exit), &sp, regs);
  }
  RunExitCheck(late, sp, regs, 6);
}

__attribute__((noinline)) void EarlyExitCheck() { ExitCheckFrom(false); }

HEAPKIT_ALWAYS_RUN_CODE __attribute__((noinline)) void LateExitCheck() {
  auto& s = heapkit::check::CheckerSettings();
  if (!g_early_registered && !s.after_destructors) {
    s.after_destructors = true;  // fallback: no early point was available
  }
  // ExitCheckFrom's own test, here too: a process with no check pending does not execute (map)
  // the checker's code at exit.
  if (!s.global_check_pending) return;
  ExitCheckFrom(true);
}

using MainFn = int (*)(int, char**, char**);
HEAPKIT_ALWAYS_WRITTEN_DATA MainFn g_real_main = nullptr;

HEAPKIT_ALWAYS_RUN_CODE int MainWrapper(int argc, char** argv, char** envp) {
  heapkit::prof::OnMainStart();  // HEAPPROFILE's exit dump, before global destructors too
  if (heapkit::check::CheckerActive()) {
    if (atexit(EarlyExitCheck) == 0) g_early_registered = true;
    heapkit::check::NoteMainStarted();
  }
  return g_real_main(argc, argv, envp);
}

HEAPKIT_ALWAYS_RUN_CODE __attribute__((constructor(101))) void HeapcheckInit() {
  heapkit::check::InitCheckerFromEnvironment();
}

HEAPKIT_ALWAYS_RUN_CODE __attribute__((destructor(101))) void HeapcheckFini() { LateExitCheck(); }

}  // namespace

using StartMainFn = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);

extern "C" __attribute__((visibility("default"))) HEAPKIT_ALWAYS_RUN_CODE int __libc_start_main(
    MainFn main, int argc, char** argv, void (*init)(), void (*fini)(), void (*rtld_fini)(),
    void* stack_end) {
  // Called once, before any other thread exists (no guarded static: no C++ runtime needed).
  const auto real = reinterpret_cast<StartMainFn>(dlsym(RTLD_NEXT, "__libc_start_main"));
  g_real_main = main;
  return real(MainWrapper, argc, argv, init, fini, rtld_fini, stack_end);
}
