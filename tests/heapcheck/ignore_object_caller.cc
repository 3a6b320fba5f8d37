// HeapLeakChecker::IgnoreObject as a gperftools user sees it. Built twice and linked with
// libheapkit.so: against gperftools 2.10's own <gperftools/heap-checker.h> (Debian's
// /usr/include/gperftools, whose inline IgnoreObject calls HeapLeakChecker::DoIgnoreObject) and
// against heapkit's (whose IgnoreObject calls HeapLeakChecker_IgnoreObject). Run under
// HEAPCHECK=normal: one block of 4321 bytes loses its last pointer; with the argument `ignore`
// it is ignored first, so the check finds no leak (CMakeLists.txt holds the expectations).
#include <gperftools/heap-checker.h>

#include <cstdlib>
#include <cstring>

namespace {

// The block's only pointer lives in this frame, below main's: the exit check does not scan it.
__attribute__((noinline)) void LoseBlock(bool ignore) {
  char* volatile block = static_cast<char*>(malloc(4321));
  memset(block, 1, 4321);
  if (ignore) HeapLeakChecker::IgnoreObject(block);
  block = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  LoseBlock(argc > 1 && strcmp(argv[1], "ignore") == 0);
  return 0;
}
