// A tiny program built against an installed heapkit tree. It checks that it really runs on
// heapkit's malloc: malloc comes from the expected place (libheapkit*.so, or the executable
// itself when linked statically) and heapkit's counters see its allocations.
//   consumer shared|static
#include <dlfcn.h>
#include <gperftools/malloc_extension.h>
#include <gperftools/malloc_extension_c.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" char __executable_start[];
extern "C" char etext[];

int main(int argc, char** argv) {
  const bool want_static = argc > 1 && strcmp(argv[1], "static") == 0;
  void* fn = reinterpret_cast<void*>(&malloc);
  Dl_info info{};
  dladdr(fn, &info);
  const bool in_exe =
      static_cast<char*>(fn) >= __executable_start && static_cast<char*>(fn) < etext;
  const char* lib = info.dli_fname != nullptr ? info.dli_fname : "?";
  if (want_static ? !in_exe : strstr(lib, "libheapkit") == nullptr) {
    printf("FAIL: malloc at %p comes from %s, wanted %s\n", fn, in_exe ? "the executable" : lib,
           want_static ? "the executable (static heapkit)" : "libheapkit*.so");
    return 1;
  }
  size_t before = 0, after = 0;
  if (!MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &before)) {
    printf("FAIL: generic.current_allocated_bytes unknown\n");
    return 1;
  }
  void* volatile p = malloc(1 << 20);
  memset(p, 1, 1 << 20);
  MallocExtension::instance()->GetNumericProperty("generic.current_allocated_bytes", &after);
  free(p);
  if (after < before + (1 << 20)) {
    printf("FAIL: heapkit did not count the allocation (%zu -> %zu)\n", before, after);
    return 1;
  }
  printf("PASS: malloc from %s; allocated bytes %zu -> %zu\n", in_exe ? "the executable" : lib,
         before, after);
  return 0;
}
