// dlclose, interposed in the shared libheapkit only (linked into no static flavour: a static
// program's dlclose stays libc's): the module's memory-map lines are remembered before the
// real dlclose unmaps it (unloaded_modules.h), so dumps taken later still name its code.
// dlclose does not depend on its caller (unlike dlopen, whose $ORIGIN and RUNPATH come from
// the calling object), so interposing it changes nothing else.
#include <dlfcn.h>

#include <atomic>

#include "profiler/format/unloaded_modules.h"

namespace {
using Dlclose = int (*)(void*);
// Looked up on first use; threads racing there store the same value (an atomic, not a guarded
// static: libheapkit.so needs no C++ runtime, profiler/on_demand/on_demand_library.h).
std::atomic<Dlclose> g_real_dlclose{nullptr};
}  // namespace

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  Dlclose real = g_real_dlclose.load(std::memory_order_acquire);
  if (real == nullptr) {
    real = reinterpret_cast<Dlclose>(dlsym(RTLD_NEXT, "dlclose"));
    g_real_dlclose.store(real, std::memory_order_release);
  }
  if (real == nullptr) return -1;
  heapkit::prof::NoteBeforeDlclose(handle);
  const int result = real(handle);
  heapkit::prof::NoteAfterDlclose(real);
  return result;
}
