// dlclose, interposed in the shared libheapkit only (linked into no static flavour: a static
// program's dlclose stays libc's): the module's memory-map lines are remembered before the
// real dlclose unmaps it (unloaded_modules.h), so dumps taken later still name its code.
// dlclose does not depend on its caller (unlike dlopen, whose $ORIGIN and RUNPATH come from
// the calling object), so interposing it changes nothing else.
#include <dlfcn.h>

#include "profiler/unloaded_modules.h"

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  using Dlclose = int (*)(void*);
  static Dlclose real = reinterpret_cast<Dlclose>(dlsym(RTLD_NEXT, "dlclose"));
  if (real == nullptr) return -1;
  heapkit::prof::NoteBeforeDlclose(handle);
  const int result = real(handle);
  heapkit::prof::NoteAfterDlclose();
  return result;
}
