// minimal mode: main() tail-calls the program proper (python's main is `return
// Py_BytesMain(argc, argv)`, a jump at -O2), so main is on no recorded stack; and with
// argv[1] = "deep" the leak is allocated 100 frames down, deeper than the recorded frames. A
// global constructor's leak (before main) must stay unreported.
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void BeforeMain(void) {
  char* volatile p = malloc(13);  // before main: minimal ignores it
  p = NULL;
}

__attribute__((noinline)) static int Deep(int n) {
  if (n == 0) {
    char* volatile p = malloc(200);
    memset(p, 1, 200);
    p = NULL;
    return 0;
  }
  return Deep(n - 1) + 1;  // not a tail call: every frame stays on the stack
}

__attribute__((noinline)) int RealMain(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "deep") == 0) return Deep(100) - 100;
  char* volatile p = malloc(77);
  memset(p, 2, 77);
  p = NULL;
  return 0;
}

int main(int argc, char** argv) { return RealMain(argc, argv); }
