// gnulib's close_stdout pattern (tar, sort, xz...): an atexit handler closes stdout and stderr
// before the leak check runs. With argv[1] = "reopen" the handler then opens a log file, which
// takes descriptor 2 (the path in argv[2]): the report must not go into it.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* g_reopen_path;

static void CloseStdout(void) {
  if (fclose(stdout) != 0) _exit(2);
  if (fclose(stderr) != 0) _exit(2);
  if (g_reopen_path != NULL) {
    int fd = open(g_reopen_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);  // becomes fd 1
    int fd2 = open(g_reopen_path, O_WRONLY | O_APPEND);                // becomes fd 2
    if (fd != 1 || fd2 != 2) _exit(3);
    write(2, "program log\n", 12);
  }
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "reopen") == 0) g_reopen_path = argv[2];
  atexit(CloseStdout);
  char* volatile leaked = malloc(123);
  leaked = NULL;
  puts("done");
  return 0;
}
