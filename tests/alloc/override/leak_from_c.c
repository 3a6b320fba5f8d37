/* A C program that leaks one object from main(): for libheapkit.so's start-up checks
 * (check_full_needs_only_libc.sh). With nothing enabled it loads no C++ runtime; under
 * HEAPCHECK the leak report must still name main and this file. */
#include <stdio.h>
#include <stdlib.h>

static void* volatile g_sink;

int main(void) {
  char* leaked = malloc(4242);
  if (leaked == NULL) return 2;
  leaked[0] = 1;
  g_sink = leaked;
  g_sink = NULL; /* the only pointer is gone: a direct leak */
  leaked = NULL;
  puts("done");
  return 0;
}
