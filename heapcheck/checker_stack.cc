#include "heapcheck/checker_stack.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <cstddef>

#include "alloc/internal/system_memory.h"

namespace heapkit::check {
namespace {

constexpr size_t kGuardBytes = 4096;
constexpr size_t kStackBytes = size_t{4} << 20;

char* g_stack = nullptr;  // lowest usable byte (above the guard page)
ucontext_t g_caller;
ucontext_t g_checker;
void (*g_fn)(void*) = nullptr;
void* g_arg = nullptr;

void Trampoline() { g_fn(g_arg); }  // returns to g_caller through uc_link

char* CheckerStack() {
  if (g_stack != nullptr) return g_stack;
  // The runtime's own mapping (system_memory.h): the checker's frames are never roots.
  void* p = internal::SystemAlloc(kGuardBytes + kStackBytes, 0);
  if (p == nullptr) return nullptr;
  if (mprotect(p, kGuardBytes, PROT_NONE) != 0) {
    internal::SystemFree(p, kGuardBytes + kStackBytes);
    return nullptr;
  }
  g_stack = static_cast<char*>(p) + kGuardBytes;
  return g_stack;
}

}  // namespace

void RunOnCheckerStack(void (*fn)(void*), void* arg) {
  char* stack = CheckerStack();
  if (stack == nullptr || getcontext(&g_checker) != 0) return fn(arg);
  g_fn = fn;
  g_arg = arg;
  g_checker.uc_stack.ss_sp = stack;
  g_checker.uc_stack.ss_size = kStackBytes;
  g_checker.uc_link = &g_caller;
  makecontext(&g_checker, Trampoline, 0);
  if (swapcontext(&g_caller, &g_checker) != 0) fn(arg);
}

}  // namespace heapkit::check
