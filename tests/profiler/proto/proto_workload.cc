// A program whose allocation stacks are known, for the profile.proto files
// (HEAP_PROFILE_FORMAT, run_proto.py): one dump by HeapProfilerDump between two phases, the exit
// dump after the second.
//   phase 1: pa 2000 x 4 KiB live; pb 500 x 64 KiB live; pc 4000 x 16 KiB freed at once;
//            pd 300 x 8 KiB freed by another thread
//   dump 1
//   phase 2: pe 200 x 32 KiB live at exit; half of pa freed
//   exit dump 2
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <thread>
#include <vector>

namespace {

__attribute__((noinline)) void* Touch(void* p, size_t n) {
  memset(p, 1, n);
  return p;
}
__attribute__((noinline)) void* pa() { return Touch(malloc(4096), 4096); }
__attribute__((noinline)) void* pb() { return Touch(malloc(65536), 65536); }
__attribute__((noinline)) void* pc() { return Touch(malloc(16384), 16384); }
__attribute__((noinline)) void* pd() { return Touch(malloc(8192), 8192); }
__attribute__((noinline)) void* pe() { return Touch(malloc(32768), 32768); }

}  // namespace

int main() {
  std::vector<void*> a, b, d, e;
  for (int i = 0; i < 2000; ++i) a.push_back(pa());
  for (int i = 0; i < 500; ++i) b.push_back(pb());
  for (int i = 0; i < 4000; ++i) free(pc());
  for (int i = 0; i < 300; ++i) d.push_back(pd());
  std::thread freer([&d] {
    for (void* p : d) free(p);
  });
  freer.join();
  // The preloaded runtime's API (the program does not link libheapkit).
  auto dump = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "HeapProfilerDump"));
  if (dump != nullptr) dump("phase one");
  for (int i = 0; i < 200; ++i) e.push_back(pe());
  for (int i = 0; i < 1000; ++i) free(a[i]);
  return 0;
}
