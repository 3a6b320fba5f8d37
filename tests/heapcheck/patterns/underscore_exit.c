// Processes that leave through _exit: a forked child (argv[1] = "child"), a vfork child that
// does not exec (argv[1] = "vfork"), and rsync's receiver, a forked child that leaves through
// _exit from its SIGUSR2 handler when the parent signals it (argv[1] = "signal"); and a forked
// child that SIGTERM kills (argv[1] = "term"; run with HEAP_CHECK_AT_SIGNAL=TERM). The parent
// leaks 123 bytes before it forks, every child 77 more bytes of its own; the parent waits for
// its child and prints the child's exit status ("child status N") on stdout.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void LeaveBySignal(int sig) {
  (void)sig;
  _exit(5);  // rsync's receiver: _exit from the handler
}

static void Leak(size_t bytes) {
  char* volatile p = malloc(bytes);
  p = NULL;
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "child";
  Leak(123);
  fflush(stdout);
  pid_t pid;
  if (strcmp(how, "vfork") == 0) {
    pid = vfork();
    if (pid == 0) _exit(7);  // the parent's memory: no allocation, no check
  } else if (strcmp(how, "signal") == 0 || strcmp(how, "term") == 0) {
    const int by_term = strcmp(how, "term") == 0;
    int ready[2];
    if (pipe(ready) != 0) return 2;
    pid = fork();
    if (pid == 0) {
      if (!by_term) signal(SIGUSR2, LeaveBySignal);
      Leak(77);
      if (write(ready[1], "r", 1) != 1) _exit(3);
      for (;;) pause();
    }
    char c;
    if (read(ready[0], &c, 1) != 1) return 2;
    kill(pid, by_term ? SIGTERM : SIGUSR2);
  } else {
    pid = fork();
    if (pid == 0) {
      Leak(77);
      printf("buffered in the child");  // _exit must not flush it
      _exit(0);
    }
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 2;
  printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return 0;
}
