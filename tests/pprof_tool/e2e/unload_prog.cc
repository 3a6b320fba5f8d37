// dlopen()s the plugin given as argv[1], lets it allocate, dlclose()s it and exits: the
// heap profile written at exit and the leak checker (the block is dropped, so it leaks) must
// still name the plugin's function (unload_check.sh).
#include <dlfcn.h>

#include <cstdio>

void* volatile g_block;

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* plugin = dlopen(argv[1], RTLD_NOW);
  if (plugin == nullptr) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto allocate = reinterpret_cast<void* (*)()>(dlsym(plugin, "plugin_allocate"));
  if (allocate == nullptr) return 1;
  g_block = allocate();
  if (dlclose(plugin) != 0) return 1;
  g_block = nullptr;  // still in use, and leaked
  return 0;
}
