// gnulib's close_stdout pattern (tar, sort, xz...): an atexit handler closes stdout and stderr
// before the leak check runs. With argv[1] = "reopen" the handler then opens a log file, which
// takes descriptor 2 (the path in argv[2]): the report must not go into it. With argv[1] =
// "close-all" it then closes every descriptor from 3 up, as daemons do (close_range), and opens
// the file in argv[2] again and again, up to descriptor 2048 or the limit: the checker's copy of
// stderr is gone and its number is another file's.
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char* g_reopen_path;
static const char* g_close_all_path;

static void CloseStdout(void) {
  if (fclose(stdout) != 0) _exit(2);
  if (fclose(stderr) != 0) _exit(2);
  if (g_reopen_path != NULL) {
    int fd = open(g_reopen_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);  // becomes fd 1
    int fd2 = open(g_reopen_path, O_WRONLY | O_APPEND);                // becomes fd 2
    if (fd != 1 || fd2 != 2) _exit(3);
    write(2, "program log\n", 12);
  }
  if (g_close_all_path != NULL) {
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) _exit(4);
    // Every number up to 2048 or the descriptor limit: the checker's copy had one of them.
    for (int fd = 0; fd >= 0 && fd < 2048;)
      fd = open(g_close_all_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  }
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "reopen") == 0) g_reopen_path = argv[2];
  if (argc > 2 && strcmp(argv[1], "close-all") == 0) g_close_all_path = argv[2];
  atexit(CloseStdout);
  char* volatile leaked = malloc(123);
  leaked = NULL;
  puts("done");
  return 0;
}
