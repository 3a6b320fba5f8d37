// Linked with nothing but libheapkit_minimal.a (-lheapkit_minimal): the archive alone must pull
// heapkit's malloc/free/operator new into the executable, no --whole-archive, no other symbol.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" char __executable_start[];
extern "C" char etext[];

static bool InExecutable(const void* fn) {
  auto* p = static_cast<const char*>(fn);
  return p >= __executable_start && p < etext;
}

int main() {
  struct {
    const char* name;
    const void* fn;
  } fns[] = {{"malloc", reinterpret_cast<const void*>(&malloc)},
             {"free", reinterpret_cast<const void*>(&free)},
             {"calloc", reinterpret_cast<const void*>(&calloc)},
             {"realloc", reinterpret_cast<const void*>(&realloc)},
             {"posix_memalign", reinterpret_cast<const void*>(&posix_memalign)},
             {"malloc_usable_size", reinterpret_cast<const void*>(&malloc_usable_size)},
             {"operator new",
              reinterpret_cast<const void*>(static_cast<void* (*)(size_t)>(&::operator new))},
             {"operator delete", reinterpret_cast<const void*>(
                                     static_cast<void (*)(void*) noexcept>(&::operator delete))}};
  int bad = 0;
  for (auto& f : fns) {
    if (!InExecutable(f.fn)) {
      printf("FAIL: %s at %p is not in the executable (not pulled from the archive)\n", f.name,
             f.fn);
      ++bad;
    }
  }
  void* p = malloc(100);
  memset(p, 1, 100);
  free(p);
  printf(bad ? "FAIL\n" : "PASS: overrides linked in from the static archive\n");
  return bad ? 1 : 0;
}
