// A plugin that allocates memory its loader keeps after dlclose() (unload_prog.cc).
#include <cstdlib>
#include <cstring>

namespace plugin_site {

__attribute__((noinline)) void* AllocateInPlugin() {
  void* p = malloc(2 << 20);
  memset(p, 3, 64);
  return p;
}

}  // namespace plugin_site

extern "C" __attribute__((visibility("default"))) void* plugin_allocate() {
  return plugin_site::AllocateInPlugin();
}
