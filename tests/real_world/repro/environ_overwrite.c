/* Reproducer (found with perl under HEAPCHECK, see ../README.md "Bugs found"): programs that set
 * their process title -- perl's `$0 = ...`, nginx, postgres, setproctitle() -- move environ to
 * fresh copies and then overwrite the original argv/environ strings in place. A runtime that
 * kept a pointer into the original strings at start-up reads garbage at exit.
 *
 * This program leaks 77 bytes, moves environ like perl does, blanks the original strings and
 * exits. With HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY=<dir> (and HEAPCHECK_SUPPRESSIONS=<f>)
 * the leak profile must be written into <dir> and the suppressions read from <f>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char** environ;
static void* volatile g_sink;

int main(void) {
  char* leak = malloc(77);
  memset(leak, 1, 77);
  g_sink = leak;
  g_sink = NULL; /* now unreachable: a direct leak of 77 bytes */
  size_t n = 0;
  while (environ[n] != NULL) ++n;
  char** copy = malloc((n + 1) * sizeof(char*));
  for (size_t i = 0; i < n; ++i) copy[i] = strdup(environ[i]);
  copy[n] = NULL;
  for (size_t i = 0; i < n; ++i) memset(environ[i], ' ', strlen(environ[i])); /* like $0= */
  environ = copy;
  const char* dir = getenv("HEAP_CHECK_DUMP_DIRECTORY");
  printf("environ moved; HEAP_CHECK_DUMP_DIRECTORY is still '%s'\n", dir ? dir : "(unset)");
  return 0;
}
